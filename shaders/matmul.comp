#version 450
#if defined(IDOT)
#extension GL_EXT_spirv_intrinsics : require
#endif
// Y = W·X for a batch of tokens (prefill): a tiled matrix-matrix product in
// two phases of one kernel, chosen by the PHASE constant.
//
// PHASE 0 quantizes X once per product: one workgroup per token takes the
// token's RMS (NORM), then rounds every unit of the row to the weight
// type's vec_dot_type exactly as matvec_sg.comp's staging does (the
// formulas of actquant.glsl, in the same order) and writes it to XQ:
//   words 0 .. vw-1       the values: 4 int8 per word for the 8-bit
//                         vec_dot_types (Q8_0, Q8_1, Q8_K: every quantized
//                         weight type), one f32 per word for the float types
//                         and with ACTQ 0; unit u's words contiguous
//   words vw .. vw+sw-1   8-bit form only: the block scale of each unit
//   then                  the sum of x over sub-block s of unit u at
//                         u*SUBS + s (Q8_1: ggml's s = f16(d·sum(q)))
// so every row tile of the product reads x already rounded instead of
// rounding it again (a mat-vec rounds x once per workgroup).
//
// PHASE 1 is the product. A workgroup owns a tile of WG·TM rows × TN
// tokens; lane l owns rows l, l+WG, ... (TM of them) of the tile and all TN
// tokens, with TM × TN sums in registers. Per unit of K a lane loads the
// TN tokens' int8 x once (from XQ, or from the workgroup's copy in shared
// memory with XSH) and each of its TM rows' unit once, dequantized in
// registers as the mat-vec does (types/*.glsl): every weight is read and
// dequantized once per tile of TN tokens instead of once per 8, and every
// x value serves TM rows. For quantized weights the dot product of a
// sub-block is a sum of integer products (dequant_sub's q are the integer
// quants, x the int8 values), exact in f32 (|q·x| sums stay below 2^24),
// then scaled as ggml's vec_dot scales it: sc·d_x·Σq·x + bi·Σx, the
// formula matvec_sg.comp applies, so the result matches the mat-vec's
// and llama.cpp's CPU sums but for the order the block terms are added.
//
// XSH (GPUs): the workgroup copies the TN tokens' x for KB units at a time
// into shared memory and every lane reads it from there (the same word for
// every lane: a broadcast), so XQ is read once per tile instead of once per
// lane. On llvmpipe shared-memory loads are a loop over the lanes and the
// per-lane copy is faster (common.glsl).
//
// IDOT (the matmul_id_* variants, quantized weights; matmul.go takes them
// where the device reports packed int8 dot products accelerated): a
// sub-block's Σq·x is SUBN/4 accumulating packed dot products
// (OpSDotAccSat, idot.glsl) of
// the weights as the type's pack_sub lays them out (four int8 lanes per
// word, in the order x's words hold the values) and x's words as phase 0
// wrote them, with no unpacking of x and no int→float conversion per
// weight: ~0.5 instructions per multiply-add against ~2.3 (cost.md). The
// integer sum is the float form's exactly, scaled by the same expression,
// so the two forms give the same bits.
//
// Epilogues as matvec_sg.comp's (EPI 0-3, BIAS); a gate/up pair is two
// products, the second with EPI 3 (y = act(y)·v), on one quantized x.
//
// MOE (mixture-of-experts prefill, runtime/vk/moe.go): the weights are an
// expert bank (MOEE runs of p.rows rows) and the columns are the batch's
// (token, slot) pairs grouped by expert (moe_group.comp's G: per-expert
// counts and offsets, then the pair indices sorted by expert). Workgroup
// (x, y, z) takes row tile x of expert z's rows and that expert's pair
// tiles y, y + gridY, ...: each expert's weight tile is read once per TN
// of its pairs, where the expert mat-vec reads it once per pair, and an
// expert no token chose costs a workgroup that reads its count and
// returns. MOE 1 (gate/up) reads x by token (XQ row pair / MOEK), MOE 2
// (down) by pair (XQ row pair: phase 0 then rounds ntok × MOEK rows); y is
// per pair either way, and the bias rows are the expert's.
//
// variants: matmul_f32:WTYPE_F32 matmul_f16:WTYPE_F16 matmul_bf16:WTYPE_BF16 matmul_q4_0:WTYPE_Q4_0 matmul_q4_1:WTYPE_Q4_1 matmul_q5_0:WTYPE_Q5_0 matmul_q5_1:WTYPE_Q5_1 matmul_q8_0:WTYPE_Q8_0 matmul_q2_k:WTYPE_Q2_K matmul_q3_k:WTYPE_Q3_K matmul_q4_k:WTYPE_Q4_K matmul_q5_k:WTYPE_Q5_K matmul_q6_k:WTYPE_Q6_K matmul_mxfp4:WTYPE_MXFP4 matmul_id_q4_0:WTYPE_Q4_0,IDOT matmul_id_q4_1:WTYPE_Q4_1,IDOT matmul_id_q5_0:WTYPE_Q5_0,IDOT matmul_id_q5_1:WTYPE_Q5_1,IDOT matmul_id_q8_0:WTYPE_Q8_0,IDOT matmul_id_q2_k:WTYPE_Q2_K,IDOT matmul_id_q3_k:WTYPE_Q3_K,IDOT matmul_id_q4_k:WTYPE_Q4_K,IDOT matmul_id_q5_k:WTYPE_Q5_K,IDOT matmul_id_q6_k:WTYPE_Q6_K,IDOT matmul_id_mxfp4:WTYPE_MXFP4,IDOT
#define ACTQ_HELPERS_ONLY
#include "common.glsl"
#include "wtype.glsl"
#include "actquant.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PHASE = 1; // 0: quantize X into XQ; 1: the product
layout(constant_id = 2) const uint TM = 4;    // rows per lane
layout(constant_id = 3) const uint TN = 8;    // tokens per workgroup (every lane takes them all)
// EPI 0: y = v; 1: y += v (residual); 2: y = v + bias[row]; 3: y = act(y) * v (up after gate)
layout(constant_id = 4) const uint EPI = 0;
layout(constant_id = 5) const uint NORM = 0;  // phase 0: x := rmsnorm(x) * nw first
layout(constant_id = 6) const uint ACTQ = 1;  // 1: round x to the weight's vec_dot_type as llama.cpp does; 0: f32 x
layout(constant_id = 7) const uint ACT = 0;   // the gate's activation in EPI 3: 0 SiLU, 1 GELU-tanh (F16 table), 2 swiglu_oai
layout(constant_id = 8) const uint BIAS = 0;  // 1: bias rows added before EPI
layout(constant_id = 9) const uint XSH = 0;   // 1: x staged in shared memory, KB units at a time
layout(constant_id = 10) const uint KB = 1;   // units per shared stage
layout(constant_id = 11) const uint SHW = 1;  // shared words: TN × KB × words of a unit
layout(constant_id = 12) const uint MOE = 0;  // 0: dense; 1: expert bank, x per token; 2: expert bank, x per pair (see above)
layout(constant_id = 13) const uint MOEK = 1; // MOE: experts per token
layout(constant_id = 14) const uint MOEE = 1; // MOE: experts in the bank

layout(binding = 0) uniform usamplerBuffer A0;
layout(binding = 1) uniform usamplerBuffer A1;
layout(binding = 2) uniform usamplerBuffer A2;
layout(binding = 3) uniform usamplerBuffer A3;
layout(binding = 4) uniform usamplerBuffer X;    // phase 0: activations, f32 bits, 4 per texel
layout(binding = 5) uniform usamplerBuffer NW;   // phase 0: norm weight, f32 bits
layout(binding = 6) uniform usamplerBuffer XQ4;  // phase 1: XQ, 4 words per texel
layout(binding = 7) uniform usamplerBuffer XQ1;  // phase 1: XQ, 1 word per texel
layout(std430, binding = 8) writeonly buffer XQW { uint xqw[]; }; // phase 0's output
layout(std430, binding = 9) readonly buffer Bias { float bias[]; };
layout(std430, binding = 10) buffer Y { float y[]; };
layout(std430, binding = 11) readonly buffer Step { uint ntok; uint pos; };
// MOE: moe_group.comp's output, R32_UINT view: [e] pairs of expert e,
// [MOEE + e] its first place in the list, [2·MOEE + i] the sorted pairs
layout(binding = 12) uniform usamplerBuffer G;
layout(binding = 13) uniform usamplerBuffer GELU; // ACT 1: quant.GELUTable, f32 bits, R32_UINT view

layout(push_constant) uniform Push {
	uint rows;    // rows in this dispatch (one part of a split matrix; MOE: of one expert)
	uint units;   // units per row
	uint xstride; // phase 0: floats per token in X (a multiple of 4)
	uint ystride; // floats per token in Y
	uint yoff;    // Y index of this dispatch's first row
	uint k;       // phase 0: real row length, for the RMS mean
	float eps;    // phase 0
	uint row0;    // matrix row of this dispatch's first row (bias index)
	uint tw;      // words per token in XQ (a multiple of 4)
} p;

#if defined(ACT_Q8_0) || defined(ACT_Q8_1) || defined(ACT_Q8_K)
#define HAS_I8 1
const bool I8 = ACTQ != 0;
#else
const bool I8 = false;
#endif

// Words of one unit's values, and the sums of x per unit.
const uint UW = I8 ? UNIT / 4 : UNIT;

// ID: the product's sums as packed int8 dot products (IDOT with 8-bit x).
#if defined(IDOT)
#include "idot.glsl"
const bool ID = I8;
#else
const bool ID = false;
#endif

float act(float x) {
	if (ACT == 1) {
		return gelu_f16(GELU, x);
	}
	return silu(x);
}

#include "glu.glsl"

// ---- phase 0 ----

shared float red[gl_WorkGroupSize.x];
shared uint xsh[SHW];

// Value i (a texel of 4) of unit u, normalised as matvec_sg.comp's xin.
vec4 xin(uint xb, uint u, uint i, float scale) {
	vec4 v = uintBitsToFloat(texelFetch(X, int(xb + u * (UNIT / 4) + i)));
	if (NORM != 0) {
		v = (v * scale) * uintBitsToFloat(texelFetch(NW, int(u * (UNIT / 4) + i)));
	}
	return v;
}

uint pack_i8(vec4 q) {
	ivec4 i = ivec4(q) & 0xFF;
	return uint(i.x | (i.y << 8) | (i.z << 16) | (i.w << 24));
}

// quant_unit writes unit u of a token to XQ from word base: matvec_sg.comp's
// stage with XQ's layout.
void quant_unit(uint base, uint vw, uint sw, uint xb, uint u, float scale) {
	const uint units = p.units;
#if defined(HAS_I8)
	if (I8) {
#if defined(ACT_Q8_0) || defined(ACT_Q8_1)
		vec4 m4 = vec4(0.0);
		[[unroll]] for (uint i = 0; i < UNIT / 4; i++) m4 = max(m4, abs(xin(xb, u, i, scale)));
		float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
		float d = amax / 127.0;
		float id = q8_id(amax, d);
		float dh = round_f16(d);
		vec4 qs = vec4(0.0), a = vec4(0.0);
		[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
			vec4 q = q8_round(xin(xb, u, i, scale) * id);
			qs += q;
			a += q * dh;
			xqw[base + u * UW + i] = pack_i8(q);
		}
		xqw[base + vw + u] = floatBitsToUint(dh);
#if defined(ACT_Q8_1)
		float sum = round_f16((qs.x + qs.y + qs.z + qs.w) * d);
#else
		float sum = a.x + a.y + a.z + a.w;
#endif
		xqw[base + vw + sw + u] = floatBitsToUint(sum);
#else // ACT_Q8_K
		vec4 hi = xin(xb, u, 0, scale), lo = hi;
		for (uint i = 1; i < UNIT / 4; i++) {
			vec4 v = xin(xb, u, i, scale);
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
				vec4 q = min(roundEven(xin(xb, u, i, scale) * iscale), vec4(127.0));
				a += q * d;
				xqw[base + u * UW + i] = pack_i8(q);
			}
			xqw[base + vw + sw + u * SUBS + s] = floatBitsToUint(a.x + a.y + a.z + a.w);
		}
		xqw[base + vw + u] = floatBitsToUint(d);
#endif
		return;
	}
#endif
	for (uint s = 0; s < SUBS; s++) {
		vec4 a = vec4(0.0);
		[[unroll]] for (uint j = 0; j < SUBN / 4; j++) {
			uint i = s * (SUBN / 4) + j;
			vec4 v = xin(xb, u, i, scale);
#if defined(ACT_F16)
			if (ACTQ != 0) v = vec4(round_f16(v.x), round_f16(v.y), round_f16(v.z), round_f16(v.w));
#elif defined(ACT_BF16)
			if (ACTQ != 0) v = vec4(round_bf16(v.x), round_bf16(v.y), round_bf16(v.z), round_bf16(v.w));
#endif
			a += v;
			[[unroll]] for (uint c = 0; c < 4; c++) xqw[base + u * UW + 4 * i + c] = floatBitsToUint(v[c]);
		}
		xqw[base + vw + sw + u * SUBS + s] = floatBitsToUint(a.x + a.y + a.z + a.w);
	}
}

void quantize() {
	const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	const uint tok = gl_WorkGroupID.y;
	if (tok >= (MOE == 2 ? ntok * MOEK : ntok)) {
		return; // the whole workgroup: no barrier is left waiting
	}
	const uint units = p.units;
	const uint xb = tok * p.xstride / 4;
	float scale = 1.0;
	if (NORM != 0) {
		// partial sums per lane, then every lane adds them in one order
		float ss = 0.0;
		for (uint i = lid; i < units * (UNIT / 4); i += wg) {
			vec4 v = uintBitsToFloat(texelFetch(X, int(xb + i)));
			ss += dot(v, v);
		}
		red[lid] = ss;
		barrier();
		ss = 0.0;
		for (uint i = 0; i < wg; i++) ss += red[i];
		scale = 1.0 / sqrt(ss / float(p.k) + p.eps);
	}
	const uint vw = units * UW;
	const uint sw = I8 ? units : 0u;
	for (uint u = lid; u < units; u += wg) {
		quant_unit(tok * p.tw, vw, sw, xb, u, scale);
	}
}

// ---- phase 1 ----

// One unit of TN tokens' x in registers (without XSH): the values (int8
// as floats for the 8-bit forms), each token's block scale and sub-block
// sums. With XSH the product reads them from shared memory instead: a
// GPU's registers hold the sums, not x.
vec4 xv[XSH != 0 || ID ? 1 : TN][XSH != 0 || ID ? 1 : UNIT / 4];
uint xw[XSH == 0 && ID ? TN : 1][XSH == 0 && ID ? UW : 1]; // ID: x's words as phase 0 wrote them
float xd[XSH != 0 ? 1 : TN];
float xs[XSH != 0 ? 1 : TN][XSH != 0 ? 1 : SUBS];

uint fetch_word(uint w) { return texelFetch(XQ1, int(w)).x; }

// The tile's columns are tokens (dense) or places in an expert's pair list
// (MOE, the list from word pb of G). Column j reads XQ row xrow (columns
// past the n real ones read the last: their sums are never stored).
uint gpair(uint pb, uint j) { return texelFetch(G, int(pb + j)).x; }

uint xrow(uint j, uint n, uint pb) {
	if (MOE == 0) {
		return min(j, n - 1);
	}
	uint pr = gpair(pb, min(j, n - 1));
	return MOE == 1 ? pr / MOEK : pr;
}

// Without XSH each lane keeps the tile's XQ rows in registers.
uint xr[XSH != 0 ? 1 : TN];

vec4 i8x4(uint wd) {
	int v = int(wd);
	return vec4(bitfieldExtract(v, 0, 8), bitfieldExtract(v, 8, 8), bitfieldExtract(v, 16, 8), bitfieldExtract(v, 24, 8));
}

// A unit's words in a shared stage: values, scale (8-bit forms), sums.
const uint UWORDS = UW + (I8 ? 1u : 0u) + SUBS;

// x4 is values 4i..4i+3 of token t's current unit (shared slot su).
vec4 x4(uint t, uint su, uint i) {
	if (XSH == 0) {
		return xv[t][i];
	}
	const uint b = (t * KB + su) * UWORDS;
	if (I8) {
		return i8x4(xsh[b + i]);
	}
	return uintBitsToFloat(uvec4(xsh[b + 4 * i], xsh[b + 4 * i + 1], xsh[b + 4 * i + 2], xsh[b + 4 * i + 3]));
}

// xword is word i of token t's current unit (ID: four int8 values).
uint xword(uint t, uint su, uint i) {
	return XSH == 0 ? xw[t][i] : xsh[(t * KB + su) * UWORDS + i];
}

float xscale(uint t, uint su) {
	if (XSH == 0) {
		return xd[t];
	}
	return I8 ? uintBitsToFloat(xsh[(t * KB + su) * UWORDS + UW]) : 1.0;
}

float xsum(uint t, uint su, uint s) {
	return XSH == 0 ? xs[t][s] : uintBitsToFloat(xsh[(t * KB + su) * UWORDS + UW + (I8 ? 1u : 0u) + s]);
}

// load_x fills the registers (without XSH) with unit u of the tile's
// columns (rows xr).
void load_x(uint u, bool uv) {
	if (XSH != 0) {
		return;
	}
	const uint units = p.units;
	const uint vw = units * UW;
	const uint sw = I8 ? units : 0u;
	[[unroll]] for (uint t = 0; t < TN; t++) {
		const uint base = xr[t] * p.tw;
		// a unit's values are whole texels (UW is a multiple of 4, tw too)
		[[unroll]] for (uint j = 0; j < UW / 4; j++) {
			uvec4 w = texelFetch(XQ4, int((base + u * UW) / 4 + j));
			if (ID) {
				[[unroll]] for (uint c = 0; c < 4; c++) xw[t][4 * j + c] = w[c];
			} else if (I8) {
				[[unroll]] for (uint c = 0; c < 4; c++) xv[t][4 * j + c] = i8x4(w[c]);
			} else {
				xv[t][j] = uintBitsToFloat(w);
			}
		}
		xd[t] = uv ? (I8 ? uintBitsToFloat(fetch_word(base + vw + u)) : 1.0) : 0.0;
		[[unroll]] for (uint s = 0; s < SUBS; s++) xs[t][s] = uv ? uintBitsToFloat(fetch_word(base + vw + sw + u * SUBS + s)) : 0.0;
	}
}

// stage_x copies units u0 .. u0+KB-1 of the tile's columns (tok0.. of n,
// the pair list at pb) into shared memory (XSH), every lane a share of the
// words.
void stage_x(uint tok0, uint n, uint pb, uint u0) {
	const uint units = p.units;
	const uint vw = units * UW;
	const uint sw = I8 ? units : 0u;
	for (uint i = gl_LocalInvocationID.x; i < TN * KB * UWORDS; i += gl_WorkGroupSize.x) {
		uint w = i % UWORDS, slot = i / UWORDS;
		uint su = slot % KB, t = slot / KB;
		if (u0 + su >= units) {
			xsh[i] = 0u; // past the row: adds exactly 0
			continue;
		}
		uint u = u0 + su;
		uint base = xrow(tok0 + t, n, pb) * p.tw;
		uint src;
		if (w < UW) {
			src = base + u * UW + w;
		} else if (I8 && w == UW) {
			src = base + vw + u;
		} else {
			src = base + vw + sw + u * SUBS + (w - UW - (I8 ? 1u : 0u));
		}
		xsh[i] = fetch_word(src);
	}
}

void main() {
	if (PHASE == 0) {
		quantize();
		return;
	}
	const uint lane = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	const uint units = p.units;
	// n columns: the batch's tokens, or expert z's pairs from word pb of G
	uint n = ntok, pb = 0u, wrow0 = 0u;
	if (MOE != 0) {
		const uint e = gl_WorkGroupID.z;
		n = texelFetch(G, int(e)).x;
		pb = 2u * MOEE + texelFetch(G, int(MOEE + e)).x;
		wrow0 = e * p.rows; // the expert's run of rows in the bank
	}
	const uint rbase = gl_WorkGroupID.x * wg * TM + lane;
	// A dense grid has a tile per TN tokens (one trip); an expert's pairs
	// may outnumber the grid's tiles, so its workgroups stride over them.
	// n and tok0 are the same for the whole workgroup (XSH's barriers).
	for (uint tok0 = gl_WorkGroupID.y * TN; tok0 < n; tok0 += gl_NumWorkGroups.y * TN) {
		if (XSH == 0) {
			[[unroll]] for (uint t = 0; t < TN; t++) xr[t] = xrow(tok0 + t, n, pb);
		}
		float acc[TM][TN];
		[[unroll]] for (uint r = 0; r < TM; r++) {
			[[unroll]] for (uint t = 0; t < TN; t++) acc[r][t] = 0.0;
		}
		for (uint u0 = 0; u0 < units; u0 += KB) {
			if (XSH != 0) {
				barrier(); // the previous stage is read by every lane
				stage_x(tok0, n, pb, u0);
				barrier();
			}
			// KB units per trip, unrolled: a trip carries every sum in the tile
			// (on llvmpipe a select per sum and lane), so it should carry them
			// over more than one unit. Units past the row read the last one
			// with a zero scale and sums: they add exactly 0.
			[[unroll]] for (uint su = 0; su < KB; su++) {
				const uint u = min(u0 + su, units - 1);
				const bool uv = u0 + su < units;
				load_x(u, uv);
				[[unroll]] for (uint r = 0; r < TM; r++) {
					// rows past the part read its last row: never stored
					const uint row = min(rbase + r * wg, p.rows - 1);
					load_unit(A0, A1, A2, A3, (wrow0 + row) * units + u);
					[[unroll]] for (uint s = 0; s < SUBS; s++) {
#if defined(IDOT)
						if (ID) {
							uint wq[SUBN / 4];
							float sc, bi;
							pack_sub(s, wq, sc, bi);
							[[unroll]] for (uint t = 0; t < TN; t++) {
								int isum = 0;
								[[unroll]] for (uint i = 0; i < SUBN / 4; i++) {
									isum = dot4_acc(wq[i], xword(t, su, s * (SUBN / 4) + i), isum);
								}
								// the float form's expression on the same integer
								acc[r][t] += sc * xscale(t, su) * float(isum) + bi * xsum(t, su, s);
							}
							continue;
						}
#endif
						float q[SUBN];
						float sc, bi;
						dequant_sub(s, q, sc, bi);
						if (XSH == 0 && I8) {
							// x in registers, integers: weight-major, each
							// weight held while it meets every token (a
							// load of x per multiply-add, not of x and q);
							// the integer sums are exact in any order, so
							// the bits are those of the form below
							float part[TN];
							[[unroll]] for (uint t = 0; t < TN; t++) part[t] = 0.0;
							[[unroll]] for (uint i = 0; i < SUBN; i++) {
								[[unroll]] for (uint t = 0; t < TN; t++) part[t] += q[i] * xv[t][s * (SUBN / 4) + i / 4][i % 4];
							}
							[[unroll]] for (uint t = 0; t < TN; t++) acc[r][t] += sc * xd[t] * part[t] + bi * xs[t][s];
							continue;
						}
						[[unroll]] for (uint t = 0; t < TN; t++) {
							vec4 d4 = vec4(0.0);
							[[unroll]] for (uint i = 0; i < SUBN / 4; i++) {
								d4 += vec4(q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]) * x4(t, su, s * (SUBN / 4) + i);
							}
							// the block scale of x once per sub-block, as
							// matvec_sg.comp and ggml scale integer sums
							acc[r][t] += sc * xscale(t, su) * (d4.x + d4.y + d4.z + d4.w) + bi * xsum(t, su, s);
						}
					}
				}
			}
		}
		[[unroll]] for (uint r = 0; r < TM; r++) {
			const uint row = rbase + r * wg;
			[[unroll]] for (uint t = 0; t < TN; t++) {
				const uint j = tok0 + t;
				if (row >= p.rows || j >= n) {
					continue;
				}
				float v = acc[r][t];
				if (BIAS != 0) {
					v += bias[p.row0 + wrow0 + row];
				}
				const uint yr = MOE == 0 ? j : gpair(pb, j); // token, or pair
				uint o = yr * p.ystride + p.yoff + row;
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
}
