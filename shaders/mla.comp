#version 450
// Multi-head latent attention's (deepseek2) moves of rows between the
// products, the rotation and the attention (runtime/vk/mla.go): for each
// token and each of a few blocks, n values of a source row copied into a
// destination row, RMS-normed by a weight on the way where norm is set
// (the latent c of the cached row), as ggml's CPU rms_norm rounds. One
// workgroup per (block, token).
// variants: mla_copy
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 1) readonly buffer Src { float src[]; };
layout(std430, binding = 2) readonly buffer Wt { float wt[]; }; // the norm's weight [n] (unread without)
layout(std430, binding = 3) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Push {
	uint n;        // values per block
	uint sstride;  // floats per token in Src
	uint soff;     // the first block's offset in a token's row of Src
	uint sblock;   // floats between blocks in Src
	uint dstride;  // floats per token in Dst
	uint doff;
	uint dblock;
	uint norm;     // 1: y = x / rms(x) · w
	float eps;
} p;

shared vec2 part[gl_WorkGroupSize.x];

void main() {
	uint b = gl_WorkGroupID.x;
	uint t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint lid = gl_LocalInvocationID.x;
	uint WG = gl_WorkGroupSize.x;
	uint sb = t * p.sstride + p.soff + b * p.sblock, db = t * p.dstride + p.doff + b * p.dblock;
	float scale = 1.0;
	if (p.norm != 0) {
		// as ggml's CPU rms_norm and the CPU backend's (common.glsl
		// sq_add, pair_add, rms_scale): f32 squares, their sum carried to
		// the double sum's f32 mean
		vec2 ss = vec2(0.0);
		for (uint i = lid; i < p.n; i += WG) {
			ss = sq_add(ss, src[sb + i]);
		}
		part[lid] = ss;
		barrier();
		for (uint s = WG / 2; s > 0; s >>= 1) {
			if (lid < s) {
				part[lid] = pair_add(part[lid], part[lid + s]);
			}
			barrier();
		}
		scale = rms_scale(part[0], float(p.n), p.eps);
	}
	for (uint i = lid; i < p.n; i += WG) {
		float v = src[sb + i];
		precise float y = (v * scale) * wt[i];
		dst[db + i] = p.norm != 0 ? y : v;
	}
}
