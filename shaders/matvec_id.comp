#version 450
#extension GL_EXT_spirv_intrinsics : require
// y = W·x for quantized weights with 4-way int8 dot products (the GPU
// tuning's intDot, chosen by runtime/vk/matvec_idot.go where the device
// has shaderIntegerDotProduct): the integer-dot form of matvec_sg.comp.
//
// x comes already rounded to the weight's vec_dot_type (Q8_0, Q8_1, Q8_K)
// in XQ, in the layout matmul.comp's phase 0 writes (the value words of
// unit u at u·UNIT/4, then a block scale per unit, then a sum per
// sub-block), by one quantize dispatch per input that every mat-vec
// reading that input shares (q, k and v; gate and up). The weights of a
// sub-block are unpacked by the type's pack_sub (types/*.glsl under IDOT)
// to int8 lanes, four per word, with a few masks and shifts instead of 32
// int→float conversions, and the sub-block's sum of q·x is SUBN/4
// accumulating packed dot products (OpSDotAccSat,
// SPV_KHR_integer_dot_product). The sum is exact
// (|Σq·x| < 2^24) and scaled as matvec_sg.comp scales its float sum of the
// same integers: sc·d_x·Σq·x + bi·Σx, so the two kernels agree but for
// the order the block terms are added.
//
// Work split: a team of LPR lanes reduces one row (LPR sized from K by
// matvec_idot.go so each lane takes a few units: a short row uses a few
// lanes and a workgroup takes many rows); lane l takes units l, l+LPR, ...
// four at a time, their weight loads independent of one another so they
// are in flight together, then the rest one at a time. TEAMS teams share
// a workgroup and take its RPG rows in turn. One butterfly reduction over
// the team per row and token. Every lane reads its own x words: they are
// the same for every row, so after the first row they come from cache.
//
// Fusions as matvec_sg.comp's but the norm (the quantize dispatch applies
// it): a second matrix (PAIR) with act(W·x)·(W2·x), bias rows (BIAS) and
// the epilogues EPI 0-3, and as ROPE_EPI (matvec_id_rope_*) a decode
// step's rotation and cache write in the last workgroup. No expert rows
// (MOE): those stay on the float kernels.
//
// OpSDotAccSat is declared in idot.glsl.
//
// variants: matvec_id_q4_0:WTYPE_Q4_0,IDOT matvec_id_q4_1:WTYPE_Q4_1,IDOT matvec_id_q5_0:WTYPE_Q5_0,IDOT matvec_id_q5_1:WTYPE_Q5_1,IDOT matvec_id_q8_0:WTYPE_Q8_0,IDOT matvec_id_q2_k:WTYPE_Q2_K,IDOT matvec_id_q3_k:WTYPE_Q3_K,IDOT matvec_id_q4_k:WTYPE_Q4_K,IDOT matvec_id_q5_k:WTYPE_Q5_K,IDOT matvec_id_q6_k:WTYPE_Q6_K,IDOT matvec_id_mxfp4:WTYPE_MXFP4,IDOT matvec_id_rope_q4_0:WTYPE_Q4_0,IDOT,ROPE_EPI matvec_id_rope_q4_1:WTYPE_Q4_1,IDOT,ROPE_EPI matvec_id_rope_q5_0:WTYPE_Q5_0,IDOT,ROPE_EPI matvec_id_rope_q5_1:WTYPE_Q5_1,IDOT,ROPE_EPI matvec_id_rope_q8_0:WTYPE_Q8_0,IDOT,ROPE_EPI matvec_id_rope_q2_k:WTYPE_Q2_K,IDOT,ROPE_EPI matvec_id_rope_q3_k:WTYPE_Q3_K,IDOT,ROPE_EPI matvec_id_rope_q4_k:WTYPE_Q4_K,IDOT,ROPE_EPI matvec_id_rope_q5_k:WTYPE_Q5_K,IDOT,ROPE_EPI matvec_id_rope_q6_k:WTYPE_Q6_K,IDOT,ROPE_EPI matvec_id_rope_mxfp4:WTYPE_MXFP4,IDOT,ROPE_EPI
#include "common.glsl"
#include "wtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LPR = 32;  // lanes per row: power of two, <= 64 and the subgroup size
layout(constant_id = 2) const uint NT = 1;    // tokens per pass
// EPI 0: y = v; 1: y += v (residual); 2: y = v + bias[row]; 3: y = act(y) * v (up after gate)
layout(constant_id = 3) const uint EPI = 0;
layout(constant_id = 4) const uint PAIR = 0;  // 1: y = act(W·x) * (W2·x)
layout(constant_id = 5) const uint ACT = 0;   // the gate's activation: 0 SiLU, 1 GELU-tanh (F16 table), 2 swiglu_oai (glu)
layout(constant_id = 6) const uint TEAMS = 4; // workgroup size / LPR
layout(constant_id = 7) const uint BIAS = 0;  // 1: bias rows added before act and EPI

layout(binding = 0) uniform usamplerBuffer A0;
layout(binding = 1) uniform usamplerBuffer A1;
layout(binding = 2) uniform usamplerBuffer A2;
layout(binding = 3) uniform usamplerBuffer A3;
layout(binding = 4) uniform usamplerBuffer B0;
layout(binding = 5) uniform usamplerBuffer B1;
layout(binding = 6) uniform usamplerBuffer B2;
layout(binding = 7) uniform usamplerBuffer B3;
layout(binding = 8) uniform usamplerBuffer XQ4;  // rounded x, 4 words per texel
layout(binding = 9) uniform usamplerBuffer XQ1;  // rounded x, 1 word per texel
layout(std430, binding = 10) readonly buffer Bias { float bias[]; };
#ifdef ROPE_EPI
layout(std430, binding = 11) coherent buffer Y { float y[]; };
#else
layout(std430, binding = 11) buffer Y { float y[]; };
#endif
layout(std430, binding = 12) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 13) readonly buffer Bias2 { float bias2[]; }; // BIAS with PAIR: the second matrix's
layout(binding = 14) uniform usamplerBuffer GELU; // ACT 1: quant.GELUTable, f32 bits, R32_UINT view

#ifdef ROPE_EPI
#define ROPE_ARRIVE_BIND 15
#define ROPE_IN(i) y[i]
#define ROPE_CID 8
#define ROPE_BIND 16
#define ROPE_NSCALE (QKNORM == 1 ? MAXG : 2)
#include "rope.glsl"
#endif

layout(push_constant) uniform Push {
	uint rows;    // rows in this dispatch (one part of a split matrix)
	uint units;   // units per row
	uint ystride; // floats per token in Y
	uint yoff;    // Y index of this dispatch's first row
	uint last;    // 1: the one token is the batch's last (logits of the last token only)
	uint row0;    // matrix row of this dispatch's first row (bias index)
	uint rpg;     // rows per workgroup
	uint tw;      // words per token in XQ (a multiple of 4)
#ifdef ROPE_EPI
	RopeArgs r;
#endif
} p;

#include "idot.glsl"

float act(float x) {
	if (ACT == 1) {
		return gelu_f16(GELU, x);
	}
	return silu(x);
}

#include "glu.glsl"

// Butterfly sum over the team, the levels written out (see matvec.comp).
float team_sum(float v) {
	if (LPR > 1) v += subgroupShuffleXor(v, 1);
	if (LPR > 2) v += subgroupShuffleXor(v, 2);
	if (LPR > 4) v += subgroupShuffleXor(v, 4);
	if (LPR > 8) v += subgroupShuffleXor(v, 8);
	if (LPR > 16) v += subgroupShuffleXor(v, 16);
	if (LPR > 32) v += subgroupShuffleXor(v, 32);
	return v;
}

float acc[NT];
float acc2[NT];
uint xbase[NT]; // each token's first word in XQ

// unit_dot adds unit u of the row at weight index wi to the sums of every
// token of the pass, for the first matrix and with PAIR the second.
void unit_dot(uint wi, uint u) {
	const uint units = p.units;
	const uint vw = units * (UNIT / 4);
	[[unroll]] for (uint pass = 0; pass < 1 + PAIR; pass++) {
		if (pass == 0) {
			load_unit(A0, A1, A2, A3, wi);
		} else {
			load_unit(B0, B1, B2, B3, wi);
		}
		[[unroll]] for (uint s = 0; s < SUBS; s++) {
			uint wq[SUBN / 4];
			float sc, bi;
			pack_sub(s, wq, sc, bi);
			[[unroll]] for (uint t = 0; t < NT; t++) {
				const uint base = xbase[t];
				float xd = uintBitsToFloat(texelFetch(XQ1, int(base + vw + u)).x);
				float xs = uintBitsToFloat(texelFetch(XQ1, int(base + vw + units + u * SUBS + s)).x);
				int isum = 0;
				[[unroll]] for (uint i = 0; i < SUBN / 16; i++) {
					uvec4 xv = texelFetch(XQ4, int((base + u * (UNIT / 4) + s * (SUBN / 4)) / 4 + i));
					isum = dot4_acc(wq[4 * i], xv.x, isum);
					isum = dot4_acc(wq[4 * i + 1], xv.y, isum);
					isum = dot4_acc(wq[4 * i + 2], xv.z, isum);
					isum = dot4_acc(wq[4 * i + 3], xv.w, isum);
				}
				float v = sc * xd * float(isum) + bi * xs;
				if (pass == 0) {
					acc[t] += v;
				} else {
					acc2[t] += v;
				}
			}
		}
	}
}

void main() {
	const uint lid = gl_LocalInvocationID.x;
	const uint lane = lid % LPR, team = lid / LPR;
	const uint units = p.units;
	const uint n = ntok;
	const uint tok0 = p.last != 0 ? n - 1 : gl_WorkGroupID.y * NT;
	if (tok0 >= n) {
		return;
	}
	// a token past the batch reads the last one's x (its sums are dropped)
	[[unroll]] for (uint t = 0; t < NT; t++) xbase[t] = min(tok0 + t, n - 1) * p.tw;

	const uint first = gl_WorkGroupID.x * p.rpg;
	const uint end = min(first + p.rpg, p.rows);
	for (uint row = first + team; row < end; row += TEAMS) {
		[[unroll]] for (uint t = 0; t < NT; t++) {
			acc[t] = 0.0;
			acc2[t] = 0.0;
		}
		const uint wrow = row * units;
		uint u = lane;
		// four units per trip, none of them guarded: their loads do not
		// wait on one another
		for (; u + 3 * LPR < units; u += 4 * LPR) {
			[[unroll]] for (uint j = 0; j < 4; j++) unit_dot(wrow + u + j * LPR, u + j * LPR);
		}
		for (; u < units; u += LPR) unit_dot(wrow + u, u);

		[[unroll]] for (uint t = 0; t < NT; t++) {
			float v = team_sum(acc[t]);
			if (BIAS != 0) {
				v += bias[p.row0 + row];
			}
			if (PAIR != 0) {
				float w2 = team_sum(acc2[t]);
				if (BIAS != 0) {
					w2 += bias2[p.row0 + row];
				}
				v = glu(v, w2);
			}
			uint tok = tok0 + t;
			if (lane == 0 && tok < n) {
				uint o = (p.last != 0 ? 0 : tok * p.ystride) + p.yoff + row;
				if (EPI == 1) {
					v += y[o];
				} else if (EPI == 2) {
					v += bias[p.row0 + row];
				} else if (EPI == 3) {
					v = glu(y[o], v);
				}
				y[o] = v;
			}
		}
	}
#ifdef ROPE_EPI
	rope_after_product(p.r, tok0);
#endif
}
