#version 450
// x[t] = dequantized row tokens[t] of the token embedding, for the tokens
// of the step (one workgroup per token; lanes take units of the row),
// times the model's embedding scale.
// variants: embed_f32:WTYPE_F32 embed_f16:WTYPE_F16 embed_bf16:WTYPE_BF16 embed_q4_0:WTYPE_Q4_0 embed_q4_1:WTYPE_Q4_1 embed_q5_0:WTYPE_Q5_0 embed_q5_1:WTYPE_Q5_1 embed_q8_0:WTYPE_Q8_0 embed_q2_k:WTYPE_Q2_K embed_q3_k:WTYPE_Q3_K embed_q4_k:WTYPE_Q4_K embed_q5_k:WTYPE_Q5_K embed_q6_k:WTYPE_Q6_K
#include "common.glsl"
#include "wtype.glsl"

layout(local_size_x_id = 0) in;
layout(binding = 0) uniform usamplerBuffer A0;
layout(binding = 1) uniform usamplerBuffer A1;
layout(binding = 2) uniform usamplerBuffer A2;
layout(binding = 3) uniform usamplerBuffer A3;
layout(std430, binding = 4) writeonly buffer X { float x[]; };
layout(std430, binding = 5) readonly buffer Step { uint ntok; uint pos; uint pad0; uint pad1; uint tokens[]; };

layout(push_constant) uniform Push {
	uint units;   // units per row
	uint cols;    // elements per row
	uint xstride; // floats per token in X
	uint row0;    // first vocabulary row held by this part of the matrix
	uint rows;    // rows in this part
	float scale;  // embeddings × scale (gemma √embd, granite's multiplier; 1 elsewhere)
} p;

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	uint tok = tokens[t];
	if (tok < p.row0 || tok >= p.row0 + p.rows) {
		return; // another part of a split matrix holds this row
	}
	uint row = tok - p.row0;
	for (uint u = gl_LocalInvocationID.x; u < p.units; u += gl_WorkGroupSize.x) {
		load_unit(A0, A1, A2, A3, row * p.units + u);
		[[unroll]] for (uint s = 0; s < SUBS; s++) {
			float q[SUBN];
			float sc, bi;
			dequant_sub(s, q, sc, bi);
			[[unroll]] for (uint i = 0; i < SUBN; i++) {
				uint e = u * UNIT + s * SUBN + i;
				if (e < p.cols) {
					x[t * p.xstride + e] = (sc * q[i] + bi) * p.scale;
				}
			}
		}
	}
}
