#version 450
// The end of a mixture-of-experts FFN: per token, the k experts' outputs y
// (the down mat-vec's, one row per (token, slot) pair) weighted by the
// router's weights and summed in slot order, each product rounded to f32
// before it is added (ggml_mul, then ggml_add of the slots' views, as
// runtime/cpu's weigh), then added to x as the residual (RES 1) or stored
// in o for a post-norm or residual scale (RES 0, residual.comp follows).
// With SCALE each expert's output is first × its own scale S[id] (Gemma
// 4's ffn_down_exps.scale, a ggml_mul before the routing weight's).
// `precise` keeps the compiler from fusing a product into the sum (an FMA
// rounds once, the reference twice). One workgroup per token.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint K = 2;   // experts per token
layout(constant_id = 2) const uint RES = 1; // 1: x += Σ w·y; 0: o = Σ w·y
layout(constant_id = 3) const uint SCALE = 0; // 1: y × S[id] before × w

layout(binding = 0) uniform usamplerBuffer Y;  // expert outputs [ntok·K][ystride], f32 bits, R32_UINT view
layout(binding = 1) uniform usamplerBuffer W;  // weights [ntok·K], R32_UINT view
layout(std430, binding = 2) writeonly buffer X { float x[]; };
layout(std430, binding = 3) readonly buffer Step { uint ntok; uint pos; };
// x read through a texel view: storage-buffer loads are llvmpipe's slow path
layout(binding = 4) uniform usamplerBuffer XR;
layout(binding = 5) uniform usamplerBuffer IDS; // expert ids [ntok·K] (SCALE)
layout(binding = 6) uniform usamplerBuffer S;   // per-expert scales [experts], f32 bits (SCALE)

layout(push_constant) uniform Push {
	uint n;       // elements per token
	uint xstride; // floats per token in X
	uint ystride; // floats per pair in Y
} p;

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	float w[K];
	float sc[K];
	for (uint j = 0; j < K; j++) {
		w[j] = uintBitsToFloat(texelFetch(W, int(t * K + j)).x);
		sc[j] = 1.0;
		if (SCALE != 0) {
			sc[j] = uintBitsToFloat(texelFetch(S, int(texelFetch(IDS, int(t * K + j)).x)).x);
		}
	}
	for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
		precise float y0 = uintBitsToFloat(texelFetch(Y, int((t * K) * p.ystride + i)).x);
		if (SCALE != 0) {
			y0 = y0 * sc[0];
		}
		precise float o = y0 * w[0];
		for (uint j = 1; j < K; j++) {
			precise float y = uintBitsToFloat(texelFetch(Y, int((t * K + j) * p.ystride + i)).x);
			if (SCALE != 0) {
				y = y * sc[j];
			}
			precise float pr = y * w[j];
			o = o + pr;
		}
		uint xi = t * p.xstride + i;
		if (RES != 0) {
			precise float r = uintBitsToFloat(texelFetch(XR, int(xi)).x) + o;
			x[xi] = r;
		} else {
			x[xi] = o;
		}
	}
}
