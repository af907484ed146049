#version 450
// y = W·x for NT tokens at once: decode (NT = 1) and prefill (NT = 8) are the
// same kernel. Optional fusions: RMSNorm×weight on x before the product
// (NORM), a second matrix and out = act(W·x)·(W2·x) (PAIR, for gate/up; act
// is SiLU, or llama.cpp's F16 GELU-tanh with ACT, or gpt-oss's clamped
// SwiGLU of both products), and an epilogue adding a residual or bias (EPI).
// BIAS adds a bias row to the product before the activation and the
// epilogue (the gate/up/down biases of gpt-oss's experts, its attention
// output bias before the residual add): with MOE the row of the pair's
// expert, with PAIR the second product's from BIAS2.
//
// MOE: the rows are one expert's run of rows of an expert bank (arch.Experts:
// expert e owns rows e*rows .. e*rows+rows-1), a different expert for each
// (token, slot) pair, so the dispatch's "tokens" are the step's ntok × MOEK
// pairs, one per pass (NT 1: tokens of a batch mostly go to different
// experts, so a dequantized weight serves one pair), and pair i's expert id
// is IDS[i] (moe_route.comp's output, read on the device: no read-back per
// layer). With MOE 1 a pair reads its token's x (gate/up: x[i / MOEK]), with
// MOE 2 its own (down: the pair's h); y is per pair either way.
//
// Work split, chosen for llvmpipe (see common.glsl): a team of LPR lanes
// owns a row; lane l takes units l, l+LPR, ... of the row (a unit is one
// quant block, or 32 values of a float type), so the x values a lane needs
// are the same for every row. Each lane loads its slice of x for all NT
// tokens into registers once (NU units, indices constant after unrolling)
// and then streams rows: per unit one or two wide texel fetches, dequantize
// in registers, NT dot products. A shuffle butterfly sums the team.
//
// variants: matvec_f32:WTYPE_F32 matvec_f16:WTYPE_F16 matvec_bf16:WTYPE_BF16 matvec_q4_0:WTYPE_Q4_0 matvec_q4_1:WTYPE_Q4_1 matvec_q5_0:WTYPE_Q5_0 matvec_q5_1:WTYPE_Q5_1 matvec_q8_0:WTYPE_Q8_0 matvec_q2_k:WTYPE_Q2_K matvec_q3_k:WTYPE_Q3_K matvec_q4_k:WTYPE_Q4_K matvec_q5_k:WTYPE_Q5_K matvec_q6_k:WTYPE_Q6_K matvec_mxfp4:WTYPE_MXFP4
#include "common.glsl"
#include "wtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LPR = 8;  // lanes per row: power of two, <= subgroup size
layout(constant_id = 2) const uint NU = 1;   // units per lane: ceil(units per row / LPR)
layout(constant_id = 3) const uint NT = 1;   // tokens per pass
// EPI 0: y = v; 1: y += v (residual, or a later chunk of K); 2: y = v + bias[row];
// 3: y = act(y) * v (up after gate); 4: y = act(y) * (v + y2) (last chunk of up)
layout(constant_id = 4) const uint EPI = 0;
layout(constant_id = 5) const uint NORM = 0; // 1: x := rmsnorm(x) * nw first; 2: the same with K split over dispatches
layout(constant_id = 6) const uint PAIR = 0; // 1: y = act(W·x) * (W2·x)
layout(constant_id = 7) const uint RB = 1;   // rows per team pass: power of two, <= LPR
layout(constant_id = 8) const uint ACTQ = 1; // 1: round x to the weight's vec_dot_type as llama.cpp does; 0: f32 x
layout(constant_id = 9) const uint ACT = 0;  // the gate's activation in PAIR and EPI 3, 4: 0 SiLU, 1 GELU-tanh (F16 table), 2 swiglu_oai (glu)
layout(constant_id = 10) const uint MOE = 0; // 0: dense; 1: expert rows, x per token; 2: expert rows, x per pair (see above)
layout(constant_id = 11) const uint MOEK = 1; // MOE: experts per token
// 1: v += bias[row] (and, with PAIR, v2 += bias2[row]) before act and EPI;
// row is within the bank with MOE (expert e's biases are row e of a [experts][rows] matrix)
layout(constant_id = 12) const uint BIAS = 0;
// 1: F32 weights (WTYPE_F32) summed as ggml_vec_dot_f32 on x86 with AVX2
// and FMA (what llama.cpp's CPU backend runs for a MoE's experts,
// MUL_MAT_ID, whatever the batch, and for rows not a multiple of 8 long),
// as runtime/cpu sums them: four 8-lane FMA accumulators over blocks of
// 32, reduced as GGML_F32x8_REDUCE, then the row's last k%32 products
// fused into that sum one at a time; where an ulp decides an F16 rounding
// downstream (a GELU table's input), the reference's order matters. Each
// row is one lane's, one token a pass (LPR, RB and NT 1, one chunk of K:
// matvec.go's orderedPlan). 2: the same layout, summed as tinyBLAS's F32
// kernel on AVX2 (what llama.cpp's CPU backend runs for a batch's dense
// F32 MUL_MAT with rows a multiple of 8 long, and the CPU backend for
// every such product, quant's gemmDotF32): one 8-lane FMA accumulator over
// the whole row, then hsum. 0 sums as the other types do.
layout(constant_id = 13) const uint ORDER = 0;

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
layout(std430, binding = 11) buffer Y { float y[]; };
layout(std430, binding = 12) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 13) readonly buffer Y2 { float y2[]; };
layout(binding = 14) uniform usamplerBuffer IDS; // MOE: expert id per (token, slot) pair, R32_UINT view
layout(std430, binding = 15) readonly buffer Bias2 { float bias2[]; }; // BIAS with PAIR: the second matrix's
layout(binding = 16) uniform usamplerBuffer GELU; // ACT 1: quant.GELUTable, f32 bits, R32_UINT view

layout(push_constant) uniform Push {
	uint rows;    // rows in this dispatch (one part of a split matrix)
	uint units;   // units per row
	uint xstride; // floats per token in X (a multiple of UNIT)
	uint ystride; // floats per token in Y
	uint yoff;    // Y index of this dispatch's first row
	uint last;    // 1: the one token is the batch's last (logits of the last token only)
	uint k;       // real row length, for the RMS mean
	float eps;
	uint row0;    // matrix row of this dispatch's first row (bias index)
	uint u0;      // first unit of the chunk of K this dispatch covers
	uint cu;      // units in the chunk (the whole row unless K is split)
} p;

vec4 xs[NT][NU][UNIT / 4];
shared vec2 ored[ORDER != 0 && NORM != 0 ? gl_WorkGroupSize.x : 1]; // ORDER's norm pairs
float xsum[NT][NU][SUBS];

#include "actquant.glsl"

float act(float x) {
	if (ACT == 1) {
		return gelu_f16(GELU, x);
	}
	return silu(x);
}

#include "glu.glsl"

// Butterfly sum over the team. The levels are written out (LPR <= 8):
// loops stepping by shifts are not unrolled by the compilers, and a loop
// left in here would turn the register arrays around it into memory.
float team_sum(float v) {
	if (LPR > 1) v += subgroupShuffleXor(v, 1);
	if (LPR > 2) v += subgroupShuffleXor(v, 2);
	if (LPR > 4) v += subgroupShuffleXor(v, 4);
	return v;
}

// team_rows sums v[r] (r < RB) over the team and returns row (lane % RB)'s
// total: a butterfly over the lane bits >= RB, then a transposing butterfly
// over the bits below RB in which each lane keeps half of its live rows
// (the lower half when its bit is clear). v has 8 slots so that every index
// below is in range whatever RB is.
float team_rows(float v[8]) {
	const uint lane = gl_LocalInvocationID.x % LPR;
	[[unroll]] for (uint r = 0; r < RB; r++) {
		if (LPR > 4 && RB <= 4) v[r] += subgroupShuffleXor(v[r], 4);
		if (LPR > 2 && RB <= 2) v[r] += subgroupShuffleXor(v[r], 2);
		if (LPR > 1 && RB <= 1) v[r] += subgroupShuffleXor(v[r], 1);
	}
	if (RB > 4) {
		bool upper = (lane & 4u) != 0;
		[[unroll]] for (uint r = 0; r < 4; r++) {
			float send = upper ? v[r] : v[r + 4];
			v[r] = (upper ? v[r + 4] : v[r]) + subgroupShuffleXor(send, 4);
		}
	}
	if (RB > 2) {
		bool upper = (lane & 2u) != 0;
		[[unroll]] for (uint r = 0; r < 2; r++) {
			float send = upper ? v[r] : v[r + 2];
			v[r] = (upper ? v[r + 2] : v[r]) + subgroupShuffleXor(send, 2);
		}
	}
	if (RB > 1) {
		bool upper = (lane & 1u) != 0;
		float send = upper ? v[0] : v[1];
		v[0] = (upper ? v[1] : v[0]) + subgroupShuffleXor(send, 1);
	}
	return v[0];
}

#if defined(WTYPE_F32)
// ordered_x is texel i of the pass's x row (at texel xb), normalised as
// main's xs ((x * scale) * w). The ordered sums read x from the texel
// buffer, not from main's register slice: a row of the slice unrolled (NU
// units, up to 256 here) with the norm's sums made llvmpipe take minutes
// to build the kernel.
vec4 ordered_x(uint xb, uint i, float scale) {
	vec4 v = uintBitsToFloat(texelFetch(X, int(xb + i)));
	if (NORM != 0) {
		v = (v * scale) * uintBitsToFloat(texelFetch(NW, int(i)));
	}
	return v;
}

// ordered_dot is row wrow of the pass's matrix (A, or B for PAIR's second)
// times the pass's x (NT is 1; its row at texel xb, scale its norm's),
// summed as ggml_vec_dot_f32 (ORDER 1) or as tinyBLAS (ORDER 2).
float ordered_dot(uint pass, uint wrow, uint xb, float scale) {
	vec4 acc[8]; // accumulator i's 8 lanes: acc[2i], acc[2i+1]
	[[unroll]] for (uint a = 0; a < 8; a++) acc[a] = vec4(0.0);
	float q[SUBN];
	float sc, bi;
	if (ORDER == 2) {
		// one accumulator, the row's 8-value steps in order (its length
		// is a multiple of 8, matvec.go's f32Order)
		[[dont_unroll]] for (uint j = 0; j < NU; j++) {
			if (pass == 0) {
				load_unit(A0, A1, A2, A3, wrow * p.units + j);
			} else {
				load_unit(B0, B1, B2, B3, wrow * p.units + j);
			}
			dequant_sub(0, q, sc, bi);
			[[unroll]] for (uint g = 0; g < 4; g++) {
				vec4 w0 = vec4(q[8 * g], q[8 * g + 1], q[8 * g + 2], q[8 * g + 3]);
				vec4 w1 = vec4(q[8 * g + 4], q[8 * g + 5], q[8 * g + 6], q[8 * g + 7]);
				if (j * UNIT + 8 * g < p.k) {
					acc[0] = fma_exact(w0, ordered_x(xb, j * (UNIT / 4) + 2 * g, scale), acc[0]);
					acc[1] = fma_exact(w1, ordered_x(xb, j * (UNIT / 4) + 2 * g + 1, scale), acc[1]);
				}
			}
		}
		// hsum: the halves' lanes added (l0+l4, l1+l5, l2+l6, l3+l7),
		// then (l0+l4 + l2+l6) + (l1+l5 + l3+l7)
		precise vec4 h = acc[0] + acc[1];
		precise float v2 = (h.x + h.z) + (h.y + h.w);
		return v2;
	}
	uint whole = p.k / UNIT; // the row's blocks of 32
	// a loop, not unrolled as the rest of this kernel: a row of exact FMAs
	// unrolled compiles slower and runs no faster on llvmpipe
	[[dont_unroll]] for (uint j = 0; j < NU; j++) {
		if (pass == 0) {
			load_unit(A0, A1, A2, A3, wrow * p.units + j);
		} else {
			load_unit(B0, B1, B2, B3, wrow * p.units + j);
		}
		dequant_sub(0, q, sc, bi);
		[[unroll]] for (uint g = 0; g < 4; g++) {
			vec4 w0 = vec4(q[8 * g], q[8 * g + 1], q[8 * g + 2], q[8 * g + 3]);
			vec4 w1 = vec4(q[8 * g + 4], q[8 * g + 5], q[8 * g + 6], q[8 * g + 7]);
			if (j < whole) {
				acc[2 * g] = fma_exact(w0, ordered_x(xb, j * (UNIT / 4) + 2 * g, scale), acc[2 * g]);
				acc[2 * g + 1] = fma_exact(w1, ordered_x(xb, j * (UNIT / 4) + 2 * g + 1, scale), acc[2 * g + 1]);
			}
		}
	}
	// accumulators 0+2 and 1+3, their sum, then the lanes as
	// (l0+l4 + l1+l5) + (l2+l6 + l3+l7)
	precise vec4 lo = (acc[0] + acc[4]) + (acc[2] + acc[6]);
	precise vec4 hi = (acc[1] + acc[5]) + (acc[3] + acc[7]);
	precise vec4 l4 = lo + hi;
	precise float v = (l4.x + l4.y) + (l4.z + l4.w);
	uint tail = p.k % UNIT;
	if (tail != 0) {
		// the row's last unit (one chunk of K: the lane's last)
		if (pass == 0) {
			load_unit(A0, A1, A2, A3, wrow * p.units + whole);
		} else {
			load_unit(B0, B1, B2, B3, wrow * p.units + whole);
		}
		dequant_sub(0, q, sc, bi);
		float xl[UNIT];
		[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
			vec4 v = ordered_x(xb, whole * (UNIT / 4) + i, scale);
			[[unroll]] for (uint c = 0; c < 4; c++) xl[4 * i + c] = v[c];
		}
		[[dont_unroll]] for (uint i = 0; i < tail; i++) {
			v = fma_exact(vec4(q[i]), vec4(xl[i]), vec4(v)).x;
		}
	}
	return v;
}
#endif

// The row of X a token (or, with MOE, a pair) reads.
uint xtok(uint tok) { return MOE == 1 ? tok / MOEK : tok; }

void main() {
	const uint lane = gl_LocalInvocationID.x % LPR;
	const uint team = gl_LocalInvocationID.x / LPR;
	const uint teams = gl_WorkGroupSize.x / LPR;
	uint n = MOE != 0 ? ntok * MOEK : ntok;
	uint tok0 = p.last != 0 ? n - 1 : gl_WorkGroupID.y * NT;
	if (tok0 >= n) {
		return;
	}
	// MOE: the row of the bank where this pair's expert starts (NT is 1)
	uint wrow0 = MOE != 0 ? texelFetch(IDS, int(tok0)).x * p.rows : 0u;

	// ORDER: every lane's row reads the token's whole row of x from X
	// (ordered_x), normalised by the workgroup's sum of its squares.
	uint oxb = 0u;
	float oscale = 1.0;
	if (ORDER != 0) {
		oxb = xtok(tok0) * p.xstride / 4;
		if (NORM != 0) {
			vec2 ss = vec2(0.0);
			for (uint i = gl_LocalInvocationID.x; i < p.units * (UNIT / 4); i += gl_WorkGroupSize.x) {
				ss = sq_add4(ss, uintBitsToFloat(texelFetch(X, int(oxb + i))));
			}
			ored[gl_LocalInvocationID.x] = ss;
			barrier();
			ss = vec2(0.0);
			for (uint i = 0; i < gl_WorkGroupSize.x; i++) ss = pair_add(ss, ored[i]);
			oscale = rms_scale(ss, float(p.k), p.eps);
		}
	} else {
		// The norm weight for this lane's slice, once for all tokens.
		vec4 nw[NU][UNIT / 4];
		if (NORM != 0) {
			[[unroll]] for (uint j = 0; j < NU; j++) {
				uint u = min(p.u0 + lane + LPR * j, p.units - 1);
				[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
					nw[j][i] = uintBitsToFloat(texelFetch(NW, int(u * (UNIT / 4) + i)));
				}
			}
		}

		// This lane's slice of x for every token; zero past the row or the batch.
		[[unroll]] for (uint t = 0; t < NT; t++) {
			bool tv = tok0 + t < n;
			float ss = 0.0;
			[[unroll]] for (uint j = 0; j < NU; j++) {
				uint u = p.u0 + lane + LPR * j;
				bool ok = tv && u < p.u0 + p.cu;
				uint base = ok ? (xtok(tok0 + t) * p.xstride + u * UNIT) / 4 : 0;
				[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
					vec4 v = uintBitsToFloat(texelFetch(X, int(base + i)));
					xs[t][j][i] = ok ? v : vec4(0.0);
					ss += dot(xs[t][j][i], xs[t][j][i]);
				}
			}
			if (NORM != 0) {
				if (NORM == 2) {
					// K is split over dispatches: the RMS needs the whole row.
					// A variant of its own, because this loop's trip count is
					// known only at run time: compiled into every norm kernel
					// (behind a run-time test), it made llvmpipe take many
					// times as long to build a K-quant prefill kernel, and the
					// result ran slower (docs/benchmarks.md, "vk: the split-K
					// norm as a variant of its own (matvec.comp, NORM 2)").
					ss = 0.0;
					for (uint u = lane; tv && u < p.units; u += LPR) {
						uint base = (xtok(tok0 + t) * p.xstride + u * UNIT) / 4;
						for (uint i = 0; i < UNIT / 4; i++) {
							vec4 v = uintBitsToFloat(texelFetch(X, int(base + i)));
							ss += dot(v, v);
						}
					}
				}
				// (x * scale) * w in that order, as the reference (ggml's
				// rms_norm then mul) rounds it: the activation rounding below
				// turns one-ulp differences into whole quantization steps.
				float scale = 1.0 / sqrt(team_sum(ss) / float(p.k) + p.eps);
				[[unroll]] for (uint j = 0; j < NU; j++) {
					[[unroll]] for (uint i = 0; i < UNIT / 4; i++) xs[t][j][i] = (xs[t][j][i] * scale) * nw[j][i];
				}
			}
			[[unroll]] for (uint j = 0; j < NU; j++) {
				float s1 = ACTQ != 0 ? act_quant(t, j) : 0.0;
				[[unroll]] for (uint s = 0; s < SUBS; s++) {
					vec4 a = vec4(0.0);
					[[unroll]] for (uint i = 0; i < SUBN / 4; i++) a += xs[t][j][s * (SUBN / 4) + i];
					xsum[t][j][s] = a.x + a.y + a.z + a.w;
				}
	#if defined(ACT_Q8_1)
				if (ACTQ != 0) {
					xsum[t][j][0] = s1; // ggml's s: f16(d * sum(q))
				}
	#endif
			}
		}
	}

	// Each team owns a contiguous block of rows (long sequential streams
	// for the prefetchers; llvmpipe runs a workgroup's subgroups one after
	// another), taken RB at a time so one transposing butterfly (RB-1
	// shuffles) sums RB rows and leaves row r's total in lane r.
	const uint nteams = gl_NumWorkGroups.x * teams;
	const uint per = ((p.rows + nteams - 1) / nteams + RB - 1) / RB * RB;
	const uint first = (gl_WorkGroupID.x * teams + team) * per;
	const uint end = min(first + per, p.rows);
	for (uint row0 = first; row0 < end; row0 += RB) {
		float acc[NT][8];
		float acc2[NT][8];
		[[unroll]] for (uint t = 0; t < NT; t++) {
			[[unroll]] for (uint r = 0; r < 8; r++) {
				acc[t][r] = 0.0;
				acc2[t][r] = 0.0;
			}
		}
		[[unroll]] for (uint r = 0; r < RB; r++) {
			uint row = min(row0 + r, p.rows - 1);
			[[unroll]] for (uint pass = 0; pass < 1 + PAIR; pass++) {
#if defined(WTYPE_F32)
				if (ORDER != 0) {
					// NT is 1 (matvec.go)
					if (pass == 0) {
						acc[0][r] = ordered_dot(pass, wrow0 + row, oxb, oscale);
					} else {
						acc2[0][r] = ordered_dot(pass, wrow0 + row, oxb, oscale);
					}
					continue;
				}
#endif
				[[unroll]] for (uint j = 0; j < NU; j++) {
					uint u = min(p.u0 + lane + LPR * j, p.u0 + p.cu - 1);
					if (pass == 0) {
						load_unit(A0, A1, A2, A3, (wrow0 + row) * p.units + u);
					} else {
						load_unit(B0, B1, B2, B3, (wrow0 + row) * p.units + u);
					}
					[[unroll]] for (uint s = 0; s < SUBS; s++) {
						float q[SUBN];
						float sc, bi;
						dequant_sub(s, q, sc, bi);
						[[unroll]] for (uint t = 0; t < NT; t++) {
							vec4 d4 = vec4(0.0);
							[[unroll]] for (uint i = 0; i < SUBN / 4; i++) {
								d4 += vec4(q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]) * xs[t][j][s * (SUBN / 4) + i];
							}
							float v = sc * (d4.x + d4.y + d4.z + d4.w) + bi * xsum[t][j][s];
							if (pass == 0) {
								acc[t][r] += v;
							} else {
								acc2[t][r] += v;
							}
						}
					}
				}
			}
		}
		uint row = row0 + (lane % RB);
		// the bias row (BIAS): the part's, or the pair's expert's in the bank
		uint brow = min(p.row0 + wrow0 + row, p.row0 + wrow0 + p.rows - 1);
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float v = team_rows(acc[t]);
			if (BIAS != 0) {
				v += bias[brow];
			}
			if (PAIR != 0) {
				float u = team_rows(acc2[t]);
				if (BIAS != 0) {
					u += bias2[brow];
				}
				v = glu(v, u);
			}
			uint tok = tok0 + t;
			if (lane < RB && row < p.rows && tok < n) {
				uint o = (p.last != 0 ? 0 : tok * p.ystride) + p.yoff + row;
				if (EPI == 1) {
					v += y[o];
				} else if (EPI == 2) {
					v += bias[p.row0 + row];
				} else if (EPI == 3) {
					v = glu(y[o], v);
				} else if (EPI == 4) {
					v = glu(y[o], v + y2[o]);
				}
				y[o] = v;
			}
		}
	}
}
