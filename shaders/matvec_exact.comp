#version 450
// y = W·x for quantized (and F16, BF16) weights, rounded as the CPU backend rounds them
// (runtime/quant's portable kernels, which its native kernels match bit for
// bit, and which follow ggml-cpu's x86 AVX2 build): the mat-vec of a matrix
// with Matrix.cpuOrder (matvec_exact.go). Two phases of one kernel, as
// matmul.comp's:
//
// PHASE 0 rounds x as runtime/quant/act.go does, one workgroup per token
// (with MOE 2 per pair): the RMS norm where the op fuses it summed as
// ggml's rms_norm (common.glsl's sq_add/pair_add/rms_scale, as matvec.comp's
// ORDER), then each block quantized by one lane: Q8_0 and Q8_1 as ggml-cpu's
// x86 quantize_row_q8_0 (127/amax, halves to even; d stored as f16, and for
// Q8_1 s = f16(d·Σq) of the unrounded d), Q8_K as quantize_row_q8_K_ref
// (-127/max of the first element of largest magnitude, nearest_int, at most
// 127, d = 1/iscale). Every division is rounded once (div_exact): a device's
// division need not be. XQ's words per token (matvec_exact.go's exactWords,
// within xqWords): the int8 codes four to a word, unit u's at u·UNIT/4; then
// one word per unit, d's f32 bits; then, for Q8_1, one per unit, s's bits.
// F16 and BF16: x rounded to the type, each value's f32 bits.
//
// PHASE 1: one lane per (row, NT tokens): the lane walks its row's blocks
// in order, dequantizes each once for its tokens, and sums each block's
// integer products exactly (int32, any order) and the block's float terms
// in the order the type's Go kernel does:
//   Q8_0, Q5_0: eight float lanes (elements 4t..4t+3 of each 32), each
//     lane += dx·dy · its integer by one exact FMA, then hsum_float_8;
//   Q4_1: the same plus summs = fma(m, s, summs), hsum + summs;
//   Q4_0: sumf += (float(Σq·y − 8Σy)·dx)·dy;
//   Q5_1: sumf += (dx·dy)·float(Σq·y) + m·s;
//   Q4_K: per super-block the scaled quants' integer and the mins' integer
//     each FMA'd into its own accumulator (dx·dy, dmin·dy), their
//     difference at the end (the repacked gemv's order);
//   Q5_K: eight lanes as Q8_0's of the scaled quants' integers, the mins'
//     by fma(−dy·dmin) into summs, hsum + summs (Q4_K with LANES likewise,
//     the mins in four lanes);
//   Q6_K: sumf += (dx·dy)·float(Σ scale·Σ(q−32)·y);
//   MXFP4: sumf += (dy·2^(e−128))·float(Σ kv[q]·y) (the E2M1 values
//     doubled, the scale halved: ggml_e8m0_to_fp32_half);
//   Q3_K: sumf += (dx·dy)·float(Σ (scale−32)·Σ q·y), q in −4..3;
//   Q2_K: sumf += (dy·dx)·float(Σ sc·Σ q·y) − (dy·dmin)·float(Σ m·Σ y),
//     each product rounded, their difference then the sum;
//   F16, BF16 (x rounded to the weight's type, one f32 word per value in
//     XQ): each product w·x exact in f32, added in double to one of four
//     chains (value i to chain i % 4, the values past the last whole 4 to
//     chain 0), float32((s0 + s1) + (s2 + s3)), as dotF16/dotBF16. The
//     device need not have f64: the doubles are integers (dbl_*), each
//     sum rounded to 53 bits as an f64 add rounds it.
// Every float step is precise and the FMAs are common.glsl's fma_exact
// (llvmpipe's fma() rounds twice): a plain GLSL expression could be fused
// where Go rounds each operation.
//
// Fusions: RMSNorm (phase 0), a second matrix with act(W·x)·(W2·x) (PAIR),
// bias rows (BIAS), the epilogues EPI 0-3 and expert rows (MOE, as
// matvec.comp's: per (token, slot) pair the expert IDS names, x per token
// with MOE 1, per pair with MOE 2), all as matvec.comp applies them.
//
// variants: matvec_exact_q4_0:WTYPE_Q4_0 matvec_exact_q4_1:WTYPE_Q4_1 matvec_exact_q5_0:WTYPE_Q5_0 matvec_exact_q5_1:WTYPE_Q5_1 matvec_exact_q8_0:WTYPE_Q8_0 matvec_exact_q4_k:WTYPE_Q4_K matvec_exact_q5_k:WTYPE_Q5_K matvec_exact_q6_k:WTYPE_Q6_K matvec_exact_mxfp4:WTYPE_MXFP4 matvec_exact_q3_k:WTYPE_Q3_K matvec_exact_q2_k:WTYPE_Q2_K matvec_exact_f16:WTYPE_F16 matvec_exact_bf16:WTYPE_BF16
#include "common.glsl"
#include "wtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PHASE = 1; // 0: round X into XQ; 1: the product
// EPI 0: y = v; 1: y += v (residual); 2: y = v + bias[row]; 3: y = act(y) * v (up after gate)
layout(constant_id = 2) const uint EPI = 0;
layout(constant_id = 3) const uint NORM = 0;  // phase 0: x := rmsnorm(x) * nw first
layout(constant_id = 4) const uint PAIR = 0;  // 1: y = act(W·x) * (W2·x)
layout(constant_id = 5) const uint ACT = 0;   // the gate's activation: 0 SiLU, 1 GELU-tanh (F16 table), 2 swiglu_oai (glu)
layout(constant_id = 6) const uint MOE = 0;   // 0: dense; 1: expert rows, x per token; 2: expert rows, x per pair
layout(constant_id = 7) const uint MOEK = 1;  // MOE: experts per token
layout(constant_id = 8) const uint BIAS = 0;  // 1: bias rows added before act and EPI
// 1: Q4_K rows summed in ggml's AVX2 vec_dot lanes (quant.Matrix.VecDot,
// dotQ4KLanes: Mamba2's projections): the scaled quants' integers in eight
// float lanes as Q5_K's, the mins' in four (sub-block pairs) by
// fma(−dy·dmin), hsum_float_8 + ((m0 + m2) + (m1 + m3)). Other types: 0.
layout(constant_id = 9) const uint LANES = 0;
layout(constant_id = 10) const uint NT = 1;    // phase 1: tokens per lane (MOE: 1), each weight dequantized once for them

layout(binding = 0) uniform usamplerBuffer A0;
layout(binding = 1) uniform usamplerBuffer A1;
layout(binding = 2) uniform usamplerBuffer A2;
layout(binding = 3) uniform usamplerBuffer A3;
layout(binding = 4) uniform usamplerBuffer B0;
layout(binding = 5) uniform usamplerBuffer B1;
layout(binding = 6) uniform usamplerBuffer B2;
layout(binding = 7) uniform usamplerBuffer B3;
layout(binding = 8) uniform usamplerBuffer X;    // phase 0: activations, f32 bits, 4 per texel
layout(binding = 9) uniform usamplerBuffer NW;   // phase 0: norm weight, f32 bits
layout(binding = 10) uniform usamplerBuffer XQ4; // phase 1: XQ, 4 words per texel
layout(binding = 11) uniform usamplerBuffer XQ1; // phase 1: XQ, 1 word per texel
layout(std430, binding = 12) writeonly buffer XQW { uint xqw[]; }; // phase 0's output
layout(std430, binding = 13) readonly buffer Bias { float bias[]; };
layout(std430, binding = 14) buffer Y { float y[]; };
layout(std430, binding = 15) readonly buffer Step { uint ntok; uint pos; };
layout(binding = 16) uniform usamplerBuffer IDS; // MOE: expert id per (token, slot) pair, R32_UINT view
layout(std430, binding = 17) readonly buffer Bias2 { float bias2[]; }; // BIAS with PAIR: the second matrix's
layout(binding = 18) uniform usamplerBuffer GELU; // ACT 1: quant.GELUTable, f32 bits, R32_UINT view

layout(push_constant) uniform Push {
	uint rows;    // rows in this dispatch (one part of a split matrix, or an expert's run)
	uint units;   // units per row
	uint xstride; // phase 0: floats per token in X (a multiple of 4)
	uint ystride; // floats per token (pair) in Y
	uint yoff;    // Y index of this dispatch's first row
	uint last;    // 1: the one token is the batch's last (logits of the last token only)
	uint k;       // phase 0: real row length, for the RMS mean
	float eps;    // phase 0
	uint row0;    // matrix row of this dispatch's first row (bias index)
	uint tw;      // words per token in XQ
} p;

float act(float x) {
	if (ACT == 1) {
		return gelu_f16(GELU, x);
	}
	return silu(x);
}

#include "glu.glsl"

// div_exact is a / b rounded once to nearest even, as Go's float32
// division: the device's quotient, then its neighbour toward the exact
// remainder where that one is nearer (the remainder a − q·b of a quotient
// within an ulp is exact in f32, and fma_exact gives it exactly).
float div_exact(float a, float b) {
	precise float q = a / b;
	float r = fma_exact(-q, b, a);
	if (r != 0.0 && q != 0.0) {
		uint qb = floatBitsToUint(q);
		float q2 = uintBitsToFloat((r > 0.0) == (q > 0.0) ? qb + 1u : qb - 1u);
		float r2 = fma_exact(-q2, b, a);
		if (abs(r2) < abs(r) || (abs(r2) == abs(r) && (floatBitsToUint(q2) & 1u) == 0u)) {
			q = q2;
		}
	}
	return q;
}

// ---- doubles in integers (F16, BF16) ----

// u64 values as uvec2 (x the low word).
uvec2 add64(uvec2 a, uvec2 b) {
	uint c;
	uint lo = uaddCarry(a.x, b.x, c);
	return uvec2(lo, a.y + b.y + c);
}
uvec2 sub64(uvec2 a, uvec2 b) {
	uint br;
	uint lo = usubBorrow(a.x, b.x, br);
	return uvec2(lo, a.y - b.y - br);
}
bool gt64(uvec2 a, uvec2 b) { return a.y > b.y || (a.y == b.y && a.x > b.x); }
int msb64(uvec2 a) { return a.y != 0u ? 32 + findMSB(a.y) : findMSB(a.x); }
uvec2 shl64(uvec2 a, int n) { // 0 <= n < 64
	if (n == 0) return a;
	if (n >= 32) return uvec2(0u, a.x << uint(n - 32));
	return uvec2(a.x << uint(n), (a.y << uint(n)) | (a.x >> uint(32 - n)));
}
uvec2 shr64(uvec2 a, int n) { // 0 <= n < 64
	if (n == 0) return a;
	if (n >= 32) return uvec2(a.y >> uint(n - 32), 0u);
	return uvec2((a.x >> uint(n)) | (a.y << uint(32 - n)), a.y >> uint(n));
}
uvec2 low64(uvec2 a, int n) { return a & sub64(shl64(uvec2(1u, 0u), n), uvec2(1u, 0u)); } // 0 <= n < 64

// dbl is a double m·2^e, sign s, m's leading bit at 62 (m < 2^63 holds
// 53 significant bits and 10 below them for rounding), or zero (m 0).
struct dbl {
	uvec2 m;
	int e;
	uint s;
};

dbl dbl_zero() { return dbl(uvec2(0u), 0, 0u); }

// dbl_f32 is f32 x as a double, exactly.
dbl dbl_f32(float x) {
	uint b = floatBitsToUint(x);
	uint ex = (b >> 23) & 0xFFu, fr = b & 0x7FFFFFu;
	if (ex == 0u && fr == 0u) return dbl_zero();
	uint mm = ex == 0u ? fr : fr | 0x800000u;
	int sh = 62 - findMSB(mm);
	return dbl(shl64(uvec2(mm, 0u), sh), (ex == 0u ? -149 : int(ex) - 150) - sh, b >> 31);
}

// dbl_add is a + b rounded to 53 bits, ties to even: the smaller shifted
// right with the bits it loses kept as a sticky low bit (below the 9 or
// more guard bits the rounding looks at, so the exact sum and the
// computed one round alike), the sum or difference, then the rounding at
// its leading bit. x - x is +0, as in f64.
dbl dbl_add(dbl a, dbl b) {
	if (b.m == uvec2(0u)) return a;
	if (a.m == uvec2(0u)) return b;
	if (b.e > a.e || (b.e == a.e && gt64(b.m, a.m))) {
		dbl t = a;
		a = b;
		b = t;
	}
	int d = a.e - b.e;
	uvec2 bm = b.m;
	if (d >= 64) {
		bm = uvec2(1u, 0u); // b's bits all sticky (b is never zero here)
	} else if (d > 0) {
		bool lost = low64(bm, d) != uvec2(0u);
		bm = shr64(bm, d);
		bm.x |= lost ? 1u : 0u;
	}
	uvec2 r = a.s == b.s ? add64(a.m, bm) : sub64(a.m, bm);
	int L = msb64(r);
	if (L < 0) return dbl_zero();
	int drop = L - 52;
	if (drop <= 0) {
		return dbl(shl64(r, 62 - L), a.e - (62 - L), a.s);
	}
	uvec2 lo = low64(r, drop), half_ = shl64(uvec2(1u, 0u), drop - 1);
	r = shr64(r, drop);
	int e = a.e + drop;
	if (gt64(lo, half_) || (lo == half_ && (r.x & 1u) != 0u)) {
		r = add64(r, uvec2(1u, 0u));
		if (r.y == (1u << 21)) { // 2^53: one bit more
			r = shr64(r, 1);
			e++;
		}
	}
	return dbl(shl64(r, 10), e - 10, a.s);
}

// dbl_to_f32 rounds a to f32, ties to even (f32's subnormals by their
// own bit count).
float dbl_to_f32(dbl a) {
	if (a.m == uvec2(0u)) return 0.0;
	int x = 62 + a.e; // a's binary exponent
	int drop = 39 + max(-126 - x, 0);
	if (drop >= 64) return a.s != 0u ? -0.0 : 0.0;
	uvec2 lo = low64(a.m, drop), half_ = shl64(uvec2(1u, 0u), drop - 1);
	uvec2 r = shr64(a.m, drop);
	if (gt64(lo, half_) || (lo == half_ && (r.x & 1u) != 0u)) r = add64(r, uvec2(1u, 0u));
	float v = ldexp(float(r.x), a.e + drop);
	return a.s != 0u ? -v : v;
}

// ---- phase 0 ----

shared vec2 red[gl_WorkGroupSize.x];

// Value i of the token's row (at texel xb), normalised as the CPU backend
// stores the norm's output: (x·scale)·w, each product rounded.
float xval(uint xb, uint i, float scale) {
	float v = uintBitsToFloat(texelFetch(X, int(xb + i / 4u))[i % 4u]);
	if (NORM != 0) {
		precise float s = v * scale;
		precise float w = s * uintBitsToFloat(texelFetch(NW, int(i / 4u))[i % 4u]);
		v = w;
	}
	return v;
}

void quantize() {
	const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	const uint tok = gl_WorkGroupID.y;
	if (tok >= (MOE == 2 ? ntok * MOEK : ntok)) {
		return; // the whole workgroup: no barrier is left waiting
	}
	const uint units = p.units;
	const uint xb = tok * p.xstride / 4u;
	float scale = 1.0;
	if (NORM != 0) {
		vec2 ss = vec2(0.0);
		for (uint i = lid; i < units * (UNIT / 4u); i += wg) {
			ss = sq_add4(ss, uintBitsToFloat(texelFetch(X, int(xb + i))));
		}
		red[lid] = ss;
		barrier();
		ss = vec2(0.0);
		for (uint i = 0; i < wg; i++) ss = pair_add(ss, red[i]);
		scale = rms_scale(ss, float(p.k), p.eps);
	}
	const uint base = tok * p.tw;
	const uint vw = units * (UNIT / 4u);
	for (uint u = lid; u < units; u += wg) {
		const uint e0 = u * UNIT;
#if defined(ACT_F16) || defined(ACT_BF16)
		// x rounded to the weight's type, kept as its f32 value
		for (uint i = 0; i < UNIT; i++) {
			float v = xval(xb, e0 + i, scale);
#if defined(ACT_F16)
			v = round_f16(v);
#else
			uint b = floatBitsToUint(v);
			v = uintBitsToFloat((b & 0x7FFFFFFFu) > 0x7F800000u ? (b | 0x00400000u) & 0xFFFF0000u : (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
#endif
			xqw[base + e0 + i] = floatBitsToUint(v);
		}
#elif defined(ACT_Q8_0) || defined(ACT_Q8_1)
		float amax = 0.0;
		for (uint i = 0; i < UNIT; i++) amax = max(amax, abs(xval(xb, e0 + i, scale)));
		float d = div_exact(amax, 127.0);
		float id = amax != 0.0 ? div_exact(127.0, amax) : 0.0;
		int sum = 0;
		for (uint w = 0; w < UNIT / 4u; w++) {
			uint word = 0u;
			for (uint c = 0; c < 4u; c++) {
				precise float t = xval(xb, e0 + 4u * w + c, scale) * id;
				int q = int(roundEven(t));
				sum += q;
				word |= uint(q & 0xFF) << (8u * c);
			}
			xqw[base + u * (UNIT / 4u) + w] = word;
		}
		xqw[base + vw + u] = floatBitsToUint(round_f16(d));
#if defined(ACT_Q8_1)
		precise float sd = float(sum) * d;
		xqw[base + vw + units + u] = floatBitsToUint(round_f16(sd));
#endif
#else // ACT_Q8_K
		// the first element of largest magnitude gives the scale's sign
		float amax = 0.0, mx = 0.0;
		for (uint i = 0; i < UNIT; i++) {
			float v = xval(xb, e0 + i, scale);
			if (abs(v) > amax) {
				amax = abs(v);
				mx = v;
			}
		}
		float iscale = amax != 0.0 ? div_exact(-127.0, mx) : 0.0;
		float d = amax != 0.0 ? div_exact(1.0, iscale) : 0.0;
		for (uint w = 0; w < UNIT / 4u; w++) {
			uint word = 0u;
			for (uint c = 0; c < 4u; c++) {
				precise float t = iscale * xval(xb, e0 + 4u * w + c, scale);
				int q = min(int(roundEven(t)), 127);
				word |= uint(q & 0xFF) << (8u * c);
			}
			xqw[base + u * (UNIT / 4u) + w] = word;
		}
		xqw[base + vw + u] = floatBitsToUint(d);
#endif
	}
}

// ---- phase 1 ----

// hsum8 is ggml's hsum_float_8 of lanes lo (0..3) and hi (4..7).
float hsum8(vec4 lo, vec4 hi) {
	precise vec4 h = lo + hi;
	precise float v = (h.x + h.z) + (h.y + h.w);
	return v;
}

// y8 is code e (0..15) of a texel of x.
int y8(uvec4 t, uint e) { return bitfieldExtract(int(t[e >> 2]), int(8u * (e & 3u)), 8); }

// load is unit idx of the pass's matrix (A, or B for PAIR's second).
void load(uint pass, uint idx) {
	if (pass == 0) {
		load_unit(A0, A1, A2, A3, idx);
	} else {
		load_unit(B0, B1, B2, B3, idx);
	}
}

// KLANES: the K-quant's scaled integers go to eight lanes (Q5_K, and
// Q4_K with LANES).
#if defined(WTYPE_Q5_K)
const bool KLANES = true;
#elif defined(WTYPE_Q4_K)
const bool KLANES = LANES != 0;
#else
const bool KLANES = false;
#endif

// Each token's running sums (see the header for which type keeps which).
vec4 lo[NT], hi[NT]; // the eight float lanes
float sumf[NT];      // a running sum
float summs[NT];     // the mins' accumulator, or Q4_1's m·s
float accS[NT], accM[NT]; // Q4_K's two
vec4 accm[NT];       // Q4_K with LANES: the mins' four lanes
uint xbase[NT];      // each token's first word in XQ
#if defined(WTYPE_F16) || defined(WTYPE_BF16)
dbl dacc[NT * 4];    // token t's four double chains at 4t..4t+3
#endif

// x4 is texel i of unit j's codes of token t.
uvec4 x4(uint t, uint j, uint i) { return texelFetch(XQ4, int((xbase[t] + j * (UNIT / 4u)) / 4u + i)); }

// exact_dot leaves in v[t] row wrow of the pass's matrix times token t's
// rounded x, rounded as the type's Go kernel: the row's blocks in order,
// each dequantized once for the NT tokens.
void exact_dot(uint pass, uint wrow, out float v[NT]) {
	const uint units = p.units;
	const uint vw = units * (UNIT / 4u);
	[[unroll]] for (uint t = 0; t < NT; t++) {
		lo[t] = vec4(0.0);
		hi[t] = vec4(0.0);
		sumf[t] = 0.0;
		summs[t] = 0.0;
		accS[t] = 0.0;
		accM[t] = 0.0;
		accm[t] = vec4(0.0);
	}
#if defined(WTYPE_F16) || defined(WTYPE_BF16)
	[[unroll]] for (uint i = 0; i < NT * 4u; i++) dacc[i] = dbl_zero();
	const uint k4 = p.k & ~3u; // values past it go to chain 0
#endif
	[[dont_unroll]] for (uint j = 0; j < units; j++) {
		load(pass, wrow * units + j);
#if defined(WTYPE_F16) || defined(WTYPE_BF16)
		[[dont_unroll]] for (uint e = 0; e < 32u; e++) {
			uint i = j * 32u + e;
			if (i >= p.k) {
				break; // the row's padding
			}
			uint hw = u_w[e >> 3][(e >> 1) & 3u];
#if defined(WTYPE_F16)
			float w = unpackHalf2x16(hw)[e & 1u];
#else
			float w = uintBitsToFloat((e & 1u) != 0u ? hw & 0xFFFF0000u : hw << 16);
#endif
			uint c = i < k4 ? e & 3u : 0u;
			[[unroll]] for (uint t = 0; t < NT; t++) {
				float xv = uintBitsToFloat(texelFetch(XQ4, int((xbase[t] + i) / 4u))[i & 3u]);
				precise float pr = w * xv;
				dacc[4u * t + c] = dbl_add(dacc[4u * t + c], dbl_f32(pr));
			}
		}
#elif UNIT == 32
		float q[SUBN];
		float sc, bi;
		dequant_sub(0, q, sc, bi);
		int w[32];
		[[unroll]] for (uint e = 0; e < 32u; e++) {
			w[e] = int(q[e]);
#if defined(WTYPE_Q5_0)
			w[e] -= 16;
#endif
		}
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float yd = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + j)).x);
			ivec4 sl = ivec4(0), sh = ivec4(0); // lane integers
			int ysum = 0;
			[[unroll]] for (uint h = 0; h < 2u; h++) {
				uvec4 xt = x4(t, j, h);
				[[unroll]] for (uint e = 0; e < 16u; e++) {
					int yv = y8(xt, e);
					ysum += yv;
					uint l = (16u * h + e) / 4u;
					if (l < 4u) {
						sl[l] += w[16u * h + e] * yv;
					} else {
						sh[l - 4u] += w[16u * h + e] * yv;
					}
				}
			}
#if defined(WTYPE_Q8_0) || defined(WTYPE_Q5_0) || defined(WTYPE_Q4_1)
#if defined(WTYPE_Q4_1)
			float dx = half_lo(u_dm), mx = half_hi(u_dm);
			float ys = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + units + j)).x);
			summs[t] = fma_exact(mx, ys, summs[t]);
#else
			float dx = u_d;
#endif
			precise float dd = dx * yd;
			lo[t] = fma_exact(vec4(dd), vec4(sl), lo[t]);
			hi[t] = fma_exact(vec4(dd), vec4(sh), hi[t]);
#elif defined(WTYPE_Q4_0)
			ivec4 s4 = sl + sh;
			int sumi = ((s4.x + s4.y) + (s4.z + s4.w)) - 8 * ysum;
			precise float tt = (float(sumi) * u_d) * yd;
			precise float nf = sumf[t] + tt;
			sumf[t] = nf;
#elif defined(WTYPE_Q5_1)
			ivec4 s4 = sl + sh;
			int sumi = (s4.x + s4.y) + (s4.z + s4.w);
			float ys = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + units + j)).x);
			precise float t1 = (half_lo(u_dm) * yd) * float(sumi);
			precise float t2 = half_hi(u_dm) * ys;
			precise float nf = sumf[t] + (t1 + t2);
			sumf[t] = nf;
#elif defined(WTYPE_MXFP4)
			ivec4 s4 = sl + sh;
			int sumi = (s4.x + s4.y) + (s4.z + s4.w);
			precise float dd = yd * u_d;
			precise float tt = dd * float(sumi);
			precise float nf = sumf[t] + tt;
			sumf[t] = nf;
#endif
		}
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
		ivec4 sl[NT], sh[NT]; // KLANES' lane integers
		ivec4 mp[NT];         // the mins' integers per sub-block pair
		int isum[NT], msum[NT];
		[[unroll]] for (uint t = 0; t < NT; t++) {
			sl[t] = ivec4(0);
			sh[t] = ivec4(0);
			mp[t] = ivec4(0);
			isum[t] = 0;
			msum[t] = 0;
		}
		[[unroll]] for (uint s = 0; s < 8u; s++) {
			float q[SUBN];
			float sc, bi, scv, mnv;
			dequant_sub(s, q, sc, bi);
			scale_min_k4(u_meta, s, scv, mnv);
			int isc = int(scv), imn = int(mnv);
			[[unroll]] for (uint t = 0; t < NT; t++) {
				int dot = 0, ysum = 0;
				[[unroll]] for (uint h = 0; h < 2u; h++) {
					uvec4 xt = x4(t, j, 2u * s + h);
					[[unroll]] for (uint e = 0; e < 16u; e++) {
						uint l = 16u * h + e;
						int yv = y8(xt, e);
						int pr = int(q[l]) * yv;
						ysum += yv;
						dot += pr;
						if (KLANES) {
							if (l / 4u < 4u) {
								sl[t][l / 4u] += isc * pr;
							} else {
								sh[t][l / 4u - 4u] += isc * pr;
							}
						}
					}
				}
				isum[t] += isc * dot;
				msum[t] += imn * ysum;
				mp[t][s / 2u] += imn * ysum;
			}
		}
		float dx = half_lo(u_meta.x), dmin = half_hi(u_meta.x);
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float yd = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + j)).x);
#if defined(WTYPE_Q4_K)
			if (LANES != 0) {
				precise float d1 = yd * dx;
				precise float d2 = -(yd * dmin);
				lo[t] = fma_exact(vec4(d1), vec4(sl[t]), lo[t]);
				hi[t] = fma_exact(vec4(d1), vec4(sh[t]), hi[t]);
				accm[t] = fma_exact(vec4(d2), vec4(mp[t]), accm[t]);
			} else {
				precise float d1 = dx * yd;
				precise float d2 = dmin * yd;
				accS[t] = fma_exact(d1, float(isum[t]), accS[t]);
				accM[t] = fma_exact(d2, float(msum[t]), accM[t]);
			}
#else
			precise float d1 = yd * dx;
			precise float d2 = -(yd * dmin);
			lo[t] = fma_exact(vec4(d1), vec4(sl[t]), lo[t]);
			hi[t] = fma_exact(vec4(d1), vec4(sh[t]), hi[t]);
			summs[t] = fma_exact(d2, float(msum[t]), summs[t]);
#endif
		}
#elif defined(WTYPE_Q6_K)
		int isum[NT];
		[[unroll]] for (uint t = 0; t < NT; t++) isum[t] = 0;
		[[unroll]] for (uint s = 0; s < 16u; s++) {
			float q[SUBN];
			float sc, bi;
			dequant_sub(s, q, sc, bi);
			int isc = texel_sbyte(u_sc, s);
			[[unroll]] for (uint t = 0; t < NT; t++) {
				uvec4 xt = x4(t, j, s);
				int dot = 0;
				[[unroll]] for (uint l = 0; l < 16u; l++) dot += (int(q[l]) - 32) * y8(xt, l);
				isum[t] += isc * dot;
			}
		}
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float yd = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + j)).x);
			precise float tt = (u_d * yd) * float(isum[t]);
			precise float nf = sumf[t] + tt;
			sumf[t] = nf;
		}
#elif defined(WTYPE_Q3_K) || defined(WTYPE_Q2_K)
		// the super-block's integers (exact in any order): Σ scale·Σ q·y,
		// and Q2_K's mins' Σ m·Σ y over the bsums' 16-element groups
		int isum[NT], msum[NT];
		[[unroll]] for (uint t = 0; t < NT; t++) {
			isum[t] = 0;
			msum[t] = 0;
		}
		[[unroll]] for (uint s = 0; s < 16u; s++) {
			float q[SUBN];
			float sc, bi;
			dequant_sub(s, q, sc, bi);
#if defined(WTYPE_Q3_K)
			int isc = int(texel_byte(u_sc, s)) - 32, imn = 0;
#else
			uint scb = texel_byte(u_sc, s);
			int isc = int(scb & 15u), imn = int(scb >> 4);
#endif
			[[unroll]] for (uint t = 0; t < NT; t++) {
				uvec4 xt = x4(t, j, s);
				int dot = 0, ysum = 0;
				[[unroll]] for (uint l = 0; l < 16u; l++) {
					int yv = y8(xt, l);
					dot += int(q[l]) * yv;
					ysum += yv;
				}
				isum[t] += isc * dot;
				msum[t] += imn * ysum;
			}
		}
		[[unroll]] for (uint t = 0; t < NT; t++) {
			float yd = uintBitsToFloat(texelFetch(XQ1, int(xbase[t] + vw + j)).x);
#if defined(WTYPE_Q3_K)
			precise float dd = u_d * yd;
			precise float tt = dd * float(isum[t]);
#else
			precise float dall = yd * half_lo(u_dm);
			precise float dmin = yd * half_hi(u_dm);
			precise float ta = dall * float(isum[t]);
			precise float tm = dmin * float(msum[t]);
			precise float tt = ta - tm;
#endif
			precise float nf = sumf[t] + tt;
			sumf[t] = nf;
		}
#endif
	}
	[[unroll]] for (uint t = 0; t < NT; t++) {
#if defined(WTYPE_F16) || defined(WTYPE_BF16)
		v[t] = dbl_to_f32(dbl_add(dbl_add(dacc[4u * t], dacc[4u * t + 1u]), dbl_add(dacc[4u * t + 2u], dacc[4u * t + 3u])));
#elif defined(WTYPE_Q8_0) || defined(WTYPE_Q5_0)
		v[t] = hsum8(lo[t], hi[t]);
#elif defined(WTYPE_Q4_1) || defined(WTYPE_Q5_K)
		precise float r = hsum8(lo[t], hi[t]) + summs[t];
		v[t] = r;
#elif defined(WTYPE_Q4_K)
		if (LANES != 0) {
			precise float m = (accm[t].x + accm[t].z) + (accm[t].y + accm[t].w);
			precise float r = hsum8(lo[t], hi[t]) + m;
			v[t] = r;
		} else {
			precise float r = accS[t] - accM[t];
			v[t] = r;
		}
#else
		v[t] = sumf[t];
#endif
	}
}

// The row of XQ a token (or, with MOE, a pair) reads.
uint xtok(uint tok) { return MOE == 1 ? tok / MOEK : tok; }

void product() {
	uint n = MOE != 0 ? ntok * MOEK : ntok;
	uint tok0 = p.last != 0 ? n - 1u : gl_WorkGroupID.y * NT;
	uint row = gl_GlobalInvocationID.x;
	if (tok0 >= n || row >= p.rows) {
		return;
	}
	// MOE: the row of the bank where this pair's expert starts (NT is 1)
	uint wrow0 = MOE != 0 ? texelFetch(IDS, int(tok0)).x * p.rows : 0u;
	// tokens past the batch read the first one's x and store nothing
	[[unroll]] for (uint t = 0; t < NT; t++) xbase[t] = xtok(tok0 + t < n ? tok0 + t : tok0) * p.tw;
	float v[NT], u[NT];
	exact_dot(0, wrow0 + row, v);
	if (PAIR != 0) {
		exact_dot(1, wrow0 + row, u);
	}
	uint brow = p.row0 + wrow0 + row;
	[[unroll]] for (uint t = 0; t < NT; t++) {
		uint tok = tok0 + t;
		if (tok >= n) {
			break;
		}
		float vt = v[t];
		if (BIAS != 0) {
			vt += bias[brow];
		}
		if (PAIR != 0) {
			float ut = u[t];
			if (BIAS != 0) {
				ut += bias2[brow];
			}
			vt = glu(vt, ut);
		}
		uint o = (p.last != 0 ? 0u : tok * p.ystride) + p.yoff + row;
		if (EPI == 1) {
			vt += y[o];
		} else if (EPI == 2) {
			vt += bias[p.row0 + row];
		} else if (EPI == 3) {
			vt = glu(y[o], vt);
		}
		y[o] = vt;
	}
}

void main() {
	if (PHASE == 0) {
		quantize();
	} else {
		product();
	}
}
