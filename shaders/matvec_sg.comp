#version 450
// y = W·x for NT tokens laid out for GPUs (the GPU tuning's sharedX), with
// matvec.comp's weight types (types/*.glsl) and fusions: RMSNorm×weight on
// x (NORM), a second matrix and out = act(W·x)·(W2·x) (PAIR; act SiLU or
// llama.cpp's F16 GELU-tanh with ACT, or gpt-oss's clamped SwiGLU), the
// bias rows before the activation (BIAS, BIAS2), and the epilogues EPI 0-3.
//
// A kernel family of its own rather than a constant of matvec.comp: there
// each lane holds its slice of x in register arrays xs[NT][NU][UNIT/4]
// whose indices must be constants after unrolling (what llvmpipe needs),
// and a row too long for them splits K into dispatches; here the workgroup
// stages x once in shared memory, already normalised and rounded to the
// weight's vec_dot_type, and lanes stride over a row's units at run time,
// so K is never split. A spec constant would put the shared arrays and this
// staging path into the SPIR-V of every kernel the CPU layout runs; as a
// separate file matvec_*.spv stay byte for byte what they were.
//
// Work split: a team of LPR lanes reduces one row (a whole subgroup
// whenever the row has that many units: LPR is the pipeline's required
// subgroup size where the device has subgroup-size control, else the size
// it guarantees); lane l takes units l, l+LPR, ... TEAMS teams share a
// workgroup and take its RPG rows in turn, all reading the one copy of x.
//
// Shared layout, per token (tw words): the values, word i of unit u at
// i*units + u so lanes on consecutive units touch consecutive banks: 4 int8
// per word for the 8-bit vec_dot_types (Q8_0, Q8_1, Q8_K: every quantized
// weight type), one f32 per word for the float types and with ACTQ 0; then,
// 8-bit form only, the block scale of each unit (Q8_0/Q8_1 d as f16's value,
// Q8_K d); then the sum of x over sub-block s of unit u at s*units + u, or
// for Q8_1 ggml's s = f16(d·sum(q)). The values and sums are those
// actquant.glsl gives matvec.comp (the same formulas in the same order), so
// the two kernels differ by summation order (and where x's block scale is
// applied) only.
//
// MOE: expert rows picked per (token, slot) pair from IDS, one pair per
// pass, x per token (1) or per pair (2): as in matvec.comp.
//
// ROPE_EPI (a decode step's Q|K|V product, one token): once every
// workgroup has stored its rows, the last to finish normalizes and rotates
// Q and K and writes K and V to the caches (rope.glsl's
// rope_after_product), in place of a rope.comp dispatch and its barrier.
// It is a compiled variant (matvec_sg_rope_*), not a specialization
// constant: the plain kernel then declares no writable binding it never
// writes (validation counts a declared, reachable write as one, and a
// shared unused buffer "written" by every mat-vec would need a barrier
// between them) and keeps Y cached (the epilogue needs it coherent).
//
// variants: matvec_sg_f32:WTYPE_F32 matvec_sg_f16:WTYPE_F16 matvec_sg_bf16:WTYPE_BF16 matvec_sg_q4_0:WTYPE_Q4_0 matvec_sg_q4_1:WTYPE_Q4_1 matvec_sg_q5_0:WTYPE_Q5_0 matvec_sg_q5_1:WTYPE_Q5_1 matvec_sg_q8_0:WTYPE_Q8_0 matvec_sg_q2_k:WTYPE_Q2_K matvec_sg_q3_k:WTYPE_Q3_K matvec_sg_q4_k:WTYPE_Q4_K matvec_sg_q5_k:WTYPE_Q5_K matvec_sg_q6_k:WTYPE_Q6_K matvec_sg_mxfp4:WTYPE_MXFP4 matvec_sg_rope_f32:WTYPE_F32,ROPE_EPI matvec_sg_rope_f16:WTYPE_F16,ROPE_EPI matvec_sg_rope_bf16:WTYPE_BF16,ROPE_EPI matvec_sg_rope_q4_0:WTYPE_Q4_0,ROPE_EPI matvec_sg_rope_q4_1:WTYPE_Q4_1,ROPE_EPI matvec_sg_rope_q5_0:WTYPE_Q5_0,ROPE_EPI matvec_sg_rope_q5_1:WTYPE_Q5_1,ROPE_EPI matvec_sg_rope_q8_0:WTYPE_Q8_0,ROPE_EPI matvec_sg_rope_q2_k:WTYPE_Q2_K,ROPE_EPI matvec_sg_rope_q3_k:WTYPE_Q3_K,ROPE_EPI matvec_sg_rope_q4_k:WTYPE_Q4_K,ROPE_EPI matvec_sg_rope_q5_k:WTYPE_Q5_K,ROPE_EPI matvec_sg_rope_q6_k:WTYPE_Q6_K,ROPE_EPI matvec_sg_rope_mxfp4:WTYPE_MXFP4,ROPE_EPI
#define ACTQ_HELPERS_ONLY
#include "common.glsl"
#include "wtype.glsl"
#include "actquant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LPR = 32;  // lanes per row: power of two, <= 64 and the subgroup size
layout(constant_id = 2) const uint NT = 1;    // tokens per pass
// EPI 0: y = v; 1: y += v (residual); 2: y = v + bias[row]; 3: y = act(y) * v (up after gate)
layout(constant_id = 3) const uint EPI = 0;
layout(constant_id = 4) const uint NORM = 0;  // 1: x := rmsnorm(x) * nw first
layout(constant_id = 5) const uint PAIR = 0;  // 1: y = act(W·x) * (W2·x)
layout(constant_id = 6) const uint ACTQ = 1;  // 1: round x to the weight's vec_dot_type as llama.cpp does; 0: f32 x
layout(constant_id = 7) const uint ACT = 0;   // the gate's activation: 0 SiLU, 1 GELU-tanh (F16 table), 2 swiglu_oai (glu)
layout(constant_id = 8) const uint TEAMS = 4; // workgroup size / LPR
layout(constant_id = 9) const uint SHW = 1;   // words of staged x: NT × tw
layout(constant_id = 10) const uint MOE = 0;  // 0: dense; 1: expert rows, x per token; 2: expert rows, x per pair (matvec.comp)
layout(constant_id = 11) const uint MOEK = 1; // MOE: experts per token
layout(constant_id = 12) const uint BIAS = 0; // 1: bias rows added before act and EPI (matvec.comp)

layout(binding = 0) uniform usamplerBuffer A0;
layout(binding = 1) uniform usamplerBuffer A1;
layout(binding = 2) uniform usamplerBuffer A2;
layout(binding = 3) uniform usamplerBuffer A3;
layout(binding = 4) uniform usamplerBuffer B0;
layout(binding = 5) uniform usamplerBuffer B1;
layout(binding = 6) uniform usamplerBuffer B2;
layout(binding = 7) uniform usamplerBuffer B3;
layout(binding = 8) uniform usamplerBuffer X;    // activations, f32 bits, 4 per texel
layout(binding = 9) uniform usamplerBuffer NW;   // norm weight, f32 bits
layout(std430, binding = 10) readonly buffer Bias { float bias[]; };
#ifdef ROPE_EPI
layout(std430, binding = 11) coherent buffer Y { float y[]; };
#else
layout(std430, binding = 11) buffer Y { float y[]; };
#endif
layout(std430, binding = 12) readonly buffer Step { uint ntok; uint pos; };
layout(binding = 13) uniform usamplerBuffer IDS; // MOE: expert id per (token, slot) pair, R32_UINT view
layout(std430, binding = 14) readonly buffer Bias2 { float bias2[]; }; // BIAS with PAIR: the second matrix's
layout(binding = 15) uniform usamplerBuffer GELU; // ACT 1: quant.GELUTable, f32 bits, R32_UINT view
#ifdef ROPE_EPI
#define ROPE_ARRIVE_BIND 16
#define ROPE_IN(i) y[i]
#define ROPE_CID 13
#define ROPE_BIND 17
#define ROPE_NSCALE (QKNORM == 1 ? MAXG : 2)
#include "rope.glsl"
#endif

layout(push_constant) uniform Push {
	uint rows;    // rows in this dispatch (one part of a split matrix)
	uint units;   // units per row
	uint xstride; // floats per token in X (a multiple of 4)
	uint ystride; // floats per token in Y
	uint yoff;    // Y index of this dispatch's first row
	uint last;    // 1: the one token is the batch's last (logits of the last token only)
	uint k;       // real row length, for the RMS mean
	float eps;
	uint row0;    // matrix row of this dispatch's first row (bias index)
	uint rpg;     // rows per workgroup
#ifdef ROPE_EPI
	RopeArgs r;
#endif
} p;

shared uint xsh[SHW];
shared float red[NT * TEAMS];

#if defined(ACT_Q8_0) || defined(ACT_Q8_1) || defined(ACT_Q8_K)
#define HAS_I8 1
const bool I8 = ACTQ != 0;
#else
const bool I8 = false;
#endif

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

// Texel i of unit u of a token whose row starts at texel xb, normalised as
// matvec.comp does ((x * scale) * w, ggml's rms_norm then mul); zero for a
// token past the batch.
vec4 xin(uint xb, uint u, uint i, float scale, bool tv) {
	vec4 v = uintBitsToFloat(texelFetch(X, int(xb + u * (UNIT / 4) + i)));
	if (NORM != 0) {
		v = (v * scale) * uintBitsToFloat(texelFetch(NW, int(u * (UNIT / 4) + i)));
	}
	return tv ? v : vec4(0.0);
}

uint pack_i8(vec4 q) {
	ivec4 i = ivec4(q) & 0xFF;
	return uint(i.x | (i.y << 8) | (i.z << 16) | (i.w << 24));
}

// stage writes unit u of one token into the shared words from base: x
// rounded as actquant.glsl's act_quant rounds it (each value read twice,
// for the block's scale and then its rounding, instead of being held in
// registers).
void stage(uint base, uint vw, uint sw, uint xb, uint u, float scale, bool tv) {
	const uint units = p.units;
#if defined(HAS_I8)
	if (I8) {
#if defined(ACT_Q8_0) || defined(ACT_Q8_1)
		vec4 m4 = vec4(0.0);
		[[unroll]] for (uint i = 0; i < UNIT / 4; i++) m4 = max(m4, abs(xin(xb, u, i, scale, tv)));
		float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
		float d = amax / 127.0;
		float id = q8_id(amax, d);
		float dh = round_f16(d);
		vec4 qs = vec4(0.0), a = vec4(0.0);
		[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
			vec4 q = q8_round(xin(xb, u, i, scale, tv) * id);
			qs += q;
			a += q * dh;
			xsh[base + i * units + u] = pack_i8(q);
		}
		xsh[base + vw + u] = floatBitsToUint(dh);
#if defined(ACT_Q8_1)
		float sum = round_f16((qs.x + qs.y + qs.z + qs.w) * d);
#else
		float sum = a.x + a.y + a.z + a.w;
#endif
		xsh[base + vw + sw + u] = floatBitsToUint(sum);
#else // ACT_Q8_K
		vec4 hi = xin(xb, u, 0, scale, tv), lo = hi;
		for (uint i = 1; i < UNIT / 4; i++) {
			vec4 v = xin(xb, u, i, scale, tv);
			hi = max(hi, v);
			lo = min(lo, v);
		}
		float mhi = max(max(hi.x, hi.y), max(hi.z, hi.w));
		float mlo = min(min(lo.x, lo.y), min(lo.z, lo.w));
		float mx = mhi >= -mlo ? mhi : mlo;
		float iscale = mx != 0.0 ? -127.0 / mx : 0.0;
		float d = mx != 0.0 ? 1.0 / iscale : 0.0;
		for (uint s = 0; s < SUBS; s++) {
			vec4 a = vec4(0.0);
			[[unroll]] for (uint j = 0; j < SUBN / 4; j++) {
				uint i = s * (SUBN / 4) + j;
				vec4 q = min(roundEven(xin(xb, u, i, scale, tv) * iscale), vec4(127.0));
				a += q * d;
				xsh[base + i * units + u] = pack_i8(q);
			}
			xsh[base + vw + sw + s * units + u] = floatBitsToUint(a.x + a.y + a.z + a.w);
		}
		xsh[base + vw + u] = floatBitsToUint(d);
#endif
		return;
	}
#endif
	for (uint s = 0; s < SUBS; s++) {
		vec4 a = vec4(0.0);
		[[unroll]] for (uint j = 0; j < SUBN / 4; j++) {
			uint i = s * (SUBN / 4) + j;
			vec4 v = xin(xb, u, i, scale, tv);
#if defined(ACT_F16)
			if (ACTQ != 0) v = vec4(round_f16(v.x), round_f16(v.y), round_f16(v.z), round_f16(v.w));
#elif defined(ACT_BF16)
			if (ACTQ != 0) v = vec4(round_bf16(v.x), round_bf16(v.y), round_bf16(v.z), round_bf16(v.w));
#endif
			a += v;
			[[unroll]] for (uint c = 0; c < 4; c++) xsh[base + (4 * i + c) * units + u] = floatBitsToUint(v[c]);
		}
		xsh[base + vw + sw + s * units + u] = floatBitsToUint(a.x + a.y + a.z + a.w);
	}
}

// The row of X a token (or, with MOE, a pair) reads.
uint xtok(uint tok) { return MOE == 1 ? tok / MOEK : tok; }

void main() {
	const uint lid = gl_LocalInvocationID.x;
	const uint lane = lid % LPR, team = lid / LPR;
	const uint wg = gl_WorkGroupSize.x;
	const uint units = p.units;
	uint n = MOE != 0 ? ntok * MOEK : ntok;
	uint tok0 = p.last != 0 ? n - 1 : gl_WorkGroupID.y * NT;
	if (tok0 >= n) {
		return; // the whole workgroup: no barrier is left waiting
	}
	// MOE: the row of the bank where this pair's expert starts (NT is 1)
	uint wrow0 = MOE != 0 ? texelFetch(IDS, int(tok0)).x * p.rows : 0u;
	const uint vw = I8 ? units * (UNIT / 4) : units * UNIT;
	const uint sw = I8 ? units : 0u;
	const uint tw = vw + sw + units * SUBS;

	// Each token's RMS over the whole row: team butterflies, then the
	// teams' partial sums in order through shared memory.
	float scale[NT];
	[[unroll]] for (uint t = 0; t < NT; t++) scale[t] = 1.0;
	if (NORM != 0) {
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float ss = 0.0;
			if (tok0 + t < n) {
				uint xb = xtok(tok0 + t) * p.xstride / 4;
				for (uint i = lid; i < units * (UNIT / 4); i += wg) {
					vec4 v = uintBitsToFloat(texelFetch(X, int(xb + i)));
					ss += dot(v, v);
				}
			}
			ss = team_sum(ss);
			if (lane == 0) {
				red[t * TEAMS + team] = ss;
			}
		}
		barrier();
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float ss = 0.0;
			for (uint i = 0; i < TEAMS; i++) ss += red[t * TEAMS + i];
			scale[t] = 1.0 / sqrt(ss / float(p.k) + p.eps);
		}
	}

	// x for every token of the pass, once per workgroup.
	[[unroll]] for (uint t = 0; t < NT; t++) {
		bool tv = tok0 + t < n;
		uint xb = tv ? xtok(tok0 + t) * p.xstride / 4 : 0u;
		for (uint u = lid; u < units; u += wg) {
			stage(t * tw, vw, sw, xb, u, scale[t], tv);
		}
	}
	barrier();

	const uint first = gl_WorkGroupID.x * p.rpg;
	const uint end = min(first + p.rpg, p.rows);
	for (uint row = first + team; row < end; row += TEAMS) {
		float acc[NT];
		float acc2[NT];
		[[unroll]] for (uint t = 0; t < NT; t++) {
			acc[t] = 0.0;
			acc2[t] = 0.0;
		}
		for (uint u = lane; u < units; u += LPR) {
			[[unroll]] for (uint pass = 0; pass < 1 + PAIR; pass++) {
				if (pass == 0) {
					load_unit(A0, A1, A2, A3, (wrow0 + row) * units + u);
				} else {
					load_unit(B0, B1, B2, B3, (wrow0 + row) * units + u);
				}
				[[unroll]] for (uint s = 0; s < SUBS; s++) {
					float q[SUBN];
					float sc, bi;
					dequant_sub(s, q, sc, bi);
					[[unroll]] for (uint t = 0; t < NT; t++) {
						const uint base = t * tw;
						float xd = I8 ? uintBitsToFloat(xsh[base + vw + u]) : 1.0;
						vec4 d4 = vec4(0.0);
						[[unroll]] for (uint i = 0; i < SUBN / 4; i++) {
							const uint ii = s * (SUBN / 4) + i;
							vec4 xv;
							if (I8) {
								int wd = int(xsh[base + ii * units + u]);
								xv = vec4(bitfieldExtract(wd, 0, 8), bitfieldExtract(wd, 8, 8), bitfieldExtract(wd, 16, 8), bitfieldExtract(wd, 24, 8));
							} else {
								uint o = base + 4 * ii * units + u;
								xv = uintBitsToFloat(uvec4(xsh[o], xsh[o + units], xsh[o + 2 * units], xsh[o + 3 * units]));
							}
							d4 += vec4(q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]) * xv;
						}
						// the block scale of x once per sub-block, not per
						// value: ggml scales its integer sums the same way
						float v = sc * xd * (d4.x + d4.y + d4.z + d4.w) + bi * uintBitsToFloat(xsh[base + vw + sw + s * units + u]);
						if (pass == 0) {
							acc[t] += v;
						} else {
							acc2[t] += v;
						}
					}
				}
			}
		}
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float v = team_sum(acc[t]);
			if (BIAS != 0) {
				v += bias[p.row0 + wrow0 + row];
			}
			if (PAIR != 0) {
				float u = team_sum(acc2[t]);
				if (BIAS != 0) {
					u += bias2[p.row0 + wrow0 + row];
				}
				v = glu(v, u);
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
