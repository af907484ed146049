#version 450
// Gemma 4's per-layer embeddings (arch.PerLayerEmbd), for the step's
// tokens, one workgroup per token, a subgroup per layer's chunk of P.
//
// MODE 0 finishes each token's per-layer inputs in place in PIN, which
// holds the projection per_layer_model_proj·x: per layer l, with v the
// projection × pscale (1/√embd) and r the token's table row (RAW, written
// by the host) × rscale (√P),
//     in_l = (rms(v)·norm + r) × oscale (1/√2)
// rounded as ggml: v·scale, then ·w, r·rscale, the sum, ·oscale.
//
// MODE 1 is one layer's gate: G = gelu(G) · in_l, G holding inp_gate·x
// (GELU as llama.cpp's CPU F16 table).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;
// EXACT: MODE 0's RMS norm sums as ggml's CPU rms_norm (common.glsl
// sq_add, subgroup_pair_sum, rms_scale), for a model whose path rounds as
// the CPU backend's (Matrix.cpuOrder); else an f32 subgroup sum
layout(constant_id = 2) const uint EXACT = 0;

layout(binding = 0) uniform usamplerBuffer RAW;  // MODE 0: [token][layers·P] table rows, f32 bits
layout(binding = 1) uniform usamplerBuffer NW;   // MODE 0: per_layer_proj_norm [P]
layout(std430, binding = 2) buffer PIN { float pin[]; };  // [token][pstride]
layout(std430, binding = 3) buffer G { float g[]; };      // MODE 1: [token][gstride]
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };
layout(binding = 5) uniform usamplerBuffer GELU; // MODE 1: quant.GELUTable, f32 bits, R32_UINT view

layout(push_constant) uniform Push {
	uint P;
	uint layers;
	uint pstride; // floats per token in PIN
	uint gstride; // floats per token in G
	uint layer;   // MODE 1: which layer's input
	float pscale;
	float rscale;
	float oscale;
	float eps;
} p;

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	if (MODE == 1) {
		uint in0 = t * p.pstride + p.layer * p.P;
		for (uint j = gl_LocalInvocationID.x; j < p.P; j += gl_WorkGroupSize.x) {
			uint gi = t * p.gstride + j;
			g[gi] = gelu_f16(GELU, g[gi]) * pin[in0 + j];
		}
		return;
	}
	uint lp = p.layers * p.P;
	for (uint l = gl_SubgroupID; l < p.layers; l += gl_NumSubgroups) {
		uint b0 = t * p.pstride + l * p.P;
		float sc;
		if (EXACT != 0) {
			vec2 ss = vec2(0.0);
			for (uint j = gl_SubgroupInvocationID; j < p.P; j += gl_SubgroupSize) {
				precise float v = pin[b0 + j] * p.pscale;
				ss = sq_add(ss, v);
			}
			sc = rms_scale(subgroup_pair_sum(ss), float(p.P), p.eps);
		} else {
			float ss = 0.0;
			for (uint j = gl_SubgroupInvocationID; j < p.P; j += gl_SubgroupSize) {
				float v = pin[b0 + j] * p.pscale;
				ss += v * v;
			}
			ss = subgroupAdd(ss);
			sc = 1.0 / sqrt(ss / float(p.P) + p.eps);
		}
		for (uint j = gl_SubgroupInvocationID; j < p.P; j += gl_SubgroupSize) {
			float w = uintBitsToFloat(texelFetch(NW, int(j)).x);
			float raw = uintBitsToFloat(texelFetch(RAW, int(t * lp + l * p.P + j)).x);
			if (EXACT != 0) {
				// each step rounded, none fused
				precise float v = pin[b0 + j] * p.pscale;
				precise float r = raw * p.rscale;
				precise float y = ((v * sc) * w + r) * p.oscale;
				pin[b0 + j] = y;
			} else {
				float v = pin[b0 + j] * p.pscale;
				float r = raw * p.rscale;
				pin[b0 + j] = ((v * sc) * w + r) * p.oscale;
			}
		}
	}
}
