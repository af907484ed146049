#version 450
// The end of a block's branch whose recipe normalizes or scales its output
// before the residual add: x[t] += rs · (NORM ? rms(o[t]) · w : o[t]) for
// the step's tokens (gemma2/3 and olmo2 post-attention and post-FFN norms,
// granite's residual scale). Rounded as ggml: (o · scale) · w, then × rs,
// then added. With ADD 0 the result is stored, not added: x[t] = rs ·
// rms(o[t]) · w (an RMS norm of a buffer other than the stream, in place
// where o is x: gemma4's post_ffw_norm_1 of the dense FFN's output). The
// bindings may alias: each element is read before its own invocation
// writes it, and every read of the sum of squares before the barrier.
// One workgroup per token; the sum of squares is reduced per
// subgroup, then over the subgroups in shared memory.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NORM = 0;
layout(constant_id = 2) const uint ADD = 1;

layout(binding = 0) uniform usamplerBuffer O;  // branch output, f32 bits, R32_UINT view
layout(binding = 1) uniform usamplerBuffer NW; // norm weight, R32_UINT view
layout(std430, binding = 2) writeonly buffer X { float x[]; };
layout(std430, binding = 3) readonly buffer Step { uint ntok; uint pos; };
// x read through a texel view: storage-buffer loads are llvmpipe's slow path
layout(binding = 4) uniform usamplerBuffer XR;

layout(push_constant) uniform Push {
	uint n;      // elements per token
	uint stride; // floats per token in O and X
	float eps;
	float rs;    // residual scale (1: none)
} p;

shared vec2 part[gl_WorkGroupSize.x]; // the subgroups' norm pairs (common.glsl's rms_scale)

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	uint base = t * p.stride;
	float scale = 1.0;
	if (NORM != 0) {
		vec2 ss = vec2(0.0);
		for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
			ss = sq_add(ss, uintBitsToFloat(texelFetch(O, int(base + i)).x));
		}
		ss = subgroup_pair_sum(ss);
		if (subgroupElect()) {
			part[gl_SubgroupID] = ss;
		}
		barrier();
		vec2 total = vec2(0.0);
		for (uint s = 0; s < gl_NumSubgroups; s++) {
			total = pair_add(total, part[s]);
		}
		scale = rms_scale(total, float(p.n), p.eps);
	}
	for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
		float v = uintBitsToFloat(texelFetch(O, int(base + i)).x);
		if (NORM != 0) {
			v = (v * scale) * uintBitsToFloat(texelFetch(NW, int(i)).x);
		}
		if (ADD != 0) {
			x[base + i] = uintBitsToFloat(texelFetch(XR, int(base + i)).x) + v * p.rs;
		} else {
			x[base + i] = v * p.rs;
		}
	}
}
