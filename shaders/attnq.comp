#version 450
// Causal GQA attention over a block-quantized KV cache (kvquant.glsl's
// layout), read as llama.cpp's CPU flash attention reads it (and the CPU
// backend's attendQuantized): the score never dequantizes K. One workgroup
// per (KV head, token) takes the G query heads sharing the KV head: it
// rotates them by the keys' Hadamard matrix (ROTK) when the cache rotates,
// converts each to Q8_0 (as ggml-cpu's x86 quantize_row_q8_0 and the CPU
// backend, the scale rounded to f16; Q8_1 for q4_1/q5_1, as
// quantize_row_q8_1_ref: also s = d·Σcodes in f16) and sums per block the
// integer dot product with the cached codes times the two scales (plus
// the key's minimum times s), the blocks in order, each block's product
// grouped as the CPU backend's dot of that type groups it (iq4_nl: the
// table's entries times the query's codes, per block as the CPU's
// dotIQ4NL). A value row is dequantized (code ×
// scale) and accumulated in f32 with the online softmax, position after
// position as the CPU backend does; with rotated values (ROTV) the output
// is multiplied by their Hadamard matrix again (its own inverse).
//
// The plain half of a mixed pair is read as the CPU backend reads it: an
// f16 K scores against the query rounded to f16 (llama.cpp's vec_dot_type
// for F16), an f32 K against the query as it is, both in f32 fused
// multiply-adds summed in the CPU backend's vecDot order (four by eight
// accumulators over each 32 dimensions, then its fixed reduction); an f16
// V is accumulated in f16, rounded after every rescale and every added
// value, as llama.cpp's f16 value buffer, an f32 V in f32.
//
// Scores are taken a tile of WG positions at a time, a position a lane,
// into shared memory; then every lane walks the tile's positions in order
// for its own dimensions (each lane keeps the same maximum and sum).
// Windows, rings, soft-cap and sinks as attention.comp.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HD = 64;
layout(constant_id = 2) const uint G = 1;
layout(constant_id = 3) const uint KT = 1;   // kvquant.glsl's type codes
layout(constant_id = 4) const uint VT = 1;
layout(constant_id = 5) const uint ROTK = 0;
layout(constant_id = 6) const uint ROTV = 0;
layout(constant_id = 7) const uint CAP = 0;  // soft-cap: 1 the device's tanh, 2 the CPU backend's (tanh_exact)
layout(constant_id = 8) const uint SINK = 0;
// ROFF: a plain key row's dimension d of the CPU backend's order is
// stored at (d + ROFF) % HD (MLA's rows, [rope | latent] here, [latent |
// rope] on the CPU; even, so an f16 word's pair stays a pair)
layout(constant_id = 9) const uint ROFF = 0;

#include "kvquant.glsl"

layout(std430, binding = 0) readonly buffer Q { float q[]; }; // [token][head][dim]
layout(binding = 1) uniform usamplerBuffer KC;                // R32_UINT view
layout(binding = 2) uniform usamplerBuffer VC;
layout(std430, binding = 3) writeonly buffer Out { float o[]; };
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 5) readonly buffer Sinks { float sinks[]; };

layout(push_constant) uniform Push {
	uint qstride;
	uint slots;
	float scale; // ÷ cap with CAP
	float cap;
	uint window;
	float rks;   // 1/sqrt(ROTK)
	float rvs;   // 1/sqrt(ROTV)
} p;

const uint WG = gl_WorkGroupSize.x;
const uint DPL = (HD + WG - 1) / WG; // value dimensions per lane

shared float sx[G * HD];    // the query rows, then the outputs to rotate back
shared int sqc[G * HD];     // the query rows' Q8_0 codes
shared float sqd[G * NB];   // and scales
shared float sqs[G * NB];   // and Q8_1's d·Σcodes
shared float ss[G * WG];    // the tile's scores
shared float wgt[G * WG];   // and their softmax weights (below)

// fwht multiplies each n-chunk of sx by the orthonormal Walsh-Hadamard
// matrix of order n (as kvquant.comp): the whole workgroup calls it.
void fwht(uint n, float sc) {
	uint lane = gl_LocalInvocationID.x;
	for (uint i = lane; i < G * HD; i += WG) {
		sx[i] *= sc;
	}
	barrier();
	for (uint s = 1; s < n; s *= 2) {
		for (uint pr = lane; pr < G * HD / 2; pr += WG) {
			uint i = (pr / s) * 2 * s + pr % s;
			float a = sx[i], b = sx[i + s];
			sx[i] = a + b;
			sx[i + s] = a - b;
		}
		barrier();
	}
}

// code is element e's integer code of the row starting at code word rb of
// a cache of type t (q4_0's offset by -8, q5_0's by -16, iq4_nl's its
// table's entry).
int code(usamplerBuffer c, uint t, uint rb, uint e) {
	if (t == 1) {
		uint w = texelFetch(c, int(rb + e / 4)).x;
		return int(w << (24 - 8 * (e % 4))) >> 24;
	}
	uint w = texelFetch(c, int(rb + e / 8)).x;
	int n = int((w >> (4 * (e % 8))) & 0xFu);
	if (t == 3 || t == 5) {
		uint h = texelFetch(c, int(rb + HD / 8 + e / 32)).x;
		n |= int((h >> (e % 32)) & 1u) << 4;
	}
	return t == 2 ? n - 8 : t == 3 ? n - 16 : t == 8 ? iq4nl_value(uint(n)) : n;
}

// plain_dot is query row g's dot product with the plain (f16 or f32) key
// row at code word rb, in the CPU backend's vecDot order (ggml_vec_dot_f16
// and _f32 on AVX2): accumulator [j][l] takes dimensions c + 8j + l of
// every whole 32 dimensions c by fused multiply-adds, then v[l] = (a0 +
// a2) + (a1 + a3) and ((v0 + v4) + (v1 + v5)) + ((v2 + v6) + (v3 + v7));
// the dimensions past the last whole 32 (a tail) each add their product,
// rounded to f32, to that in double, rounded to f32 at the end: here a
// pair (sq_add's), whose hi + lo carries the sum to about 48 bits, so it
// rounds as the double sum does. Lanes l and l + 1 share an f16 word.
// Dimension d is read at (d + ROFF) % HD.
const uint NP = HD & ~31u; // the dimensions the accumulators take

uint pdim(uint d) { return ROFF == 0 ? d : (d + ROFF) % HD; }

vec2 plain_key(uint rb, uint e) {
	if (KT == 7) {
		return vec2(uintBitsToFloat(texelFetch(KC, int(rb + e)).x), uintBitsToFloat(texelFetch(KC, int(rb + e + 1)).x));
	}
	return unpackHalf2x16(texelFetch(KC, int(rb + e / 2)).x);
}

float plain_dot(uint g, uint rb) {
	precise float r = 0.0;
	if (NP > 0) {
		precise float v[8];
		[[unroll]] for (uint l = 0; l < 8; l += 2) {
			precise float a[4], b[4];
			[[unroll]] for (uint j = 0; j < 4; j++) {
				a[j] = 0.0;
				b[j] = 0.0;
			}
			for (uint c = 0; c < NP; c += 32) {
				[[unroll]] for (uint j = 0; j < 4; j++) {
					uint e = pdim(c + 8 * j + l);
					vec2 k = plain_key(rb, e);
					a[j] = fma(sx[g * HD + e], k.x, a[j]);
					b[j] = fma(sx[g * HD + e + 1], k.y, b[j]);
				}
			}
			v[l] = (a[0] + a[2]) + (a[1] + a[3]);
			v[l + 1] = (b[0] + b[2]) + (b[1] + b[3]);
		}
		precise float t0 = v[0] + v[4], t1 = v[1] + v[5], t2 = v[2] + v[6], t3 = v[3] + v[7];
		r = (t0 + t1) + (t2 + t3);
	}
	if (NP < HD) {
		vec2 s = vec2(r, 0.0);
		for (uint d = NP; d < HD; d += 2) {
			uint e = pdim(d);
			vec2 k = plain_key(rb, e);
			precise float p0 = sx[g * HD + e] * k.x;
			precise float p1 = sx[g * HD + e + 1] * k.y;
			vec2 t = two_sum(s.x, p0);
			precise float lo = s.y + t.y;
			s = vec2(t.x, lo);
			t = two_sum(s.x, p1);
			lo = s.y + t.y;
			s = vec2(t.x, lo);
		}
		precise float rs = s.x + s.y;
		r = rs;
	}
	return r;
}

// scale_of is block b's scale and minimum (0 for a type without) of row
// row in a cache of type t.
vec2 scale_of(usamplerBuffer c, uint t, uint rows, uint row, uint b) {
	if (has_min(t)) {
		return unpackHalf2x16(texelFetch(c, int(rows * cw(t) + row * NB + b)).x);
	}
	uint w = texelFetch(c, int(rows * cw(t) + row * SW + b / 2)).x;
	vec2 h = unpackHalf2x16(w);
	return vec2((b % 2) == 0 ? h.x : h.y, 0.0);
}

// value is element e of a cached value row, dequantized as ggml does.
float value(uint row, uint rows, uint e) {
	if (VT == 7) {
		return uintBitsToFloat(texelFetch(VC, int(row * HD + e)).x);
	}
	if (VT == 6) {
		vec2 h = unpackHalf2x16(texelFetch(VC, int(row * (HD / 2) + e / 2)).x);
		return (e % 2) == 0 ? h.x : h.y;
	}
	vec2 dm = scale_of(VC, VT, rows, row, e / 32);
	precise float v = float(code(VC, VT, row * cw(VT), e)) * dm.x;
	precise float vm = v + dm.y;
	return has_min(VT) ? vm : v;
}

void main() {
	uint kvh = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint kvheads = gl_NumWorkGroups.x;
	uint lane = gl_LocalInvocationID.x;
	uint at = pos + t;
	uint from = p.window != 0 && at + 1 > p.window ? at + 1 - p.window : 0;
	uint span = at + 1;
	uint qb = t * p.qstride + kvh * G * HD;
	for (uint i = lane; i < G * HD; i += WG) {
		sx[i] = q[qb + i];
	}
	barrier();
	if (KT == 6) {
		for (uint i = lane; i < G * HD; i += WG) {
			sx[i] = round_f16(sx[i]);
		}
		barrier();
	}
	if (ROTK != 0) {
		fwht(ROTK, p.rks);
	}
	for (uint i = lane; i < G * NB && !plain(KT); i += WG) {
		uint o = i * 32;
		float amax = 0.0;
		for (uint j = 0; j < 32; j++) amax = max(amax, abs(sx[o + j]));
		float d = amax / 127.0;
		// Q8_0 and Q8_1 as ggml-cpu's x86 quantize_row_q8_0/_q8_1
		// (x·(127/amax), halves to even), as the CPU backend converts the
		// query; Q8_1's s = d·Σcodes in f16
		float id = amax != 0.0 ? 127.0 / amax : 0.0;
		int sum = 0;
		for (uint j = 0; j < 32; j++) {
			precise float v = sx[o + j] * id;
			sqc[o + j] = int(roundEven(v));
			sum += sqc[o + j];
		}
		sqd[i] = f16_exact(d);
		precise float s = float(sum) * d;
		sqs[i] = f16_exact(s);
	}
	barrier();
	uint rows = kvheads * p.slots;
	uint kw = cw(KT);
	float acc[G][DPL], m[G], l[G];
	[[unroll]] for (uint g = 0; g < G; g++) {
		[[unroll]] for (uint j = 0; j < DPL; j++) acc[g][j] = 0.0;
		m[g] = -1.0 / 0.0;
		l[g] = 0.0;
	}
	for (uint base = from; base < span; base += WG) {
		uint a = base + lane;
		if (a < span) {
			uint row = kvh * p.slots + a % p.slots;
			[[unroll]] for (uint g = 0; g < G; g++) {
				if (plain(KT)) {
					ss[g * WG + lane] = plain_dot(g, row * kw);
					continue;
				}
				precise float sumf = 0.0;
				if (KT == 1 || KT == 3 || KT == 4) {
					// q8_0, q5_0 and q4_1 as ggml-cpu's x86 AVX2
					// ggml_vec_dot_q8_0_q8_0/_q5_0_q8_0/_q4_1_q8_1 (and the
					// CPU backend's dots): eight float lanes, each adding its
					// four elements' integer sum times dk·dq with one FMA per
					// block, reduced at the end as hsum_float_8; q4_1 adds
					// its minimum times the query's s into summs by FMA
					float lanes[8];
					[[unroll]] for (uint t = 0; t < 8; t++) lanes[t] = 0.0;
					float summs = 0.0;
					for (uint b = 0; b < NB; b++) {
						vec2 dm = scale_of(KC, KT, rows, row, b);
						if (KT == 4) {
							summs = fma_exact(dm.y, sqs[g * NB + b], summs);
						}
						precise float dd = dm.x * sqd[g * NB + b];
						[[unroll]] for (uint t = 0; t < 8; t++) {
							int si = 0;
							[[unroll]] for (uint j = 4 * t; j < 4 * t + 4; j++) {
								si += sqc[g * HD + b * 32 + j] * code(KC, KT, row * kw, b * 32 + j);
							}
							lanes[t] = fma_exact(dd, float(si), lanes[t]);
						}
					}
					precise float lo = (lanes[0] + lanes[4]) + (lanes[2] + lanes[6]);
					precise float hi = (lanes[1] + lanes[5]) + (lanes[3] + lanes[7]);
					precise float sum8 = lo + hi;
					ss[g * WG + lane] = KT == 4 ? sum8 + summs : sum8;
					continue;
				}
				for (uint b = 0; b < NB; b++) {
					int sumi = 0;
					for (uint j = 0; j < 32; j++) {
						sumi += sqc[g * HD + b * 32 + j] * code(KC, KT, row * kw, b * 32 + j);
					}
					vec2 dm = scale_of(KC, KT, rows, row, b);
					float dq = sqd[g * NB + b];
					precise float f;
					if (KT == 2) {
						precise float f1 = float(sumi) * dm.x;
						f = f1 * dq;
					} else {
						precise float dd = dm.x * dq;
						f = dd * float(sumi);
						if (has_min(KT)) {
							precise float ms = dm.y * sqs[g * NB + b];
							f = f + ms;
						}
					}
					sumf += f;
				}
				ss[g * WG + lane] = sumf;
			}
		}
		barrier();
		uint n = min(WG, span - base);
		// Each lane weighs its own position once, as the walk below will
		// meet it: e^(m - s) where s is a new maximum (m the running one
		// before it: the earlier tiles' and this tile's earlier scores),
		// else e^(s - m). exp_exact rounds as the CPU backend's exp and
		// is dear: every lane weighing every position made decoding
		// several times slower.
		[[unroll]] for (uint g = 0; g < G; g++) {
			if (lane < n) {
				float s = ss[g * WG + lane] * p.scale;
				if (CAP != 0) {
					s = p.cap * (CAP == 2 ? tanh_exact(s) : tanh(s));
				}
				ss[g * WG + lane] = s;
			}
		}
		barrier();
		[[unroll]] for (uint g = 0; g < G; g++) {
			if (lane < n) {
				float s = ss[g * WG + lane], mp = m[g];
				for (uint i = 0; i < lane; i++) mp = max(mp, ss[g * WG + i]);
				wgt[g * WG + lane] = s > mp ? exp_exact(mp - s) : exp_exact(s - mp);
			}
		}
		barrier();
		for (uint j = 0; j < n; j++) {
			uint row = kvh * p.slots + (base + j) % p.slots;
			float vd[DPL];
			[[unroll]] for (uint k = 0; k < DPL; k++) {
				uint e = lane + k * WG;
				vd[k] = e < HD ? value(row, rows, e) : 0.0;
			}
			[[unroll]] for (uint g = 0; g < G; g++) {
				float s = ss[g * WG + j];
				float ms = 1.0, vs = 1.0;
				if (s > m[g]) {
					ms = wgt[g * WG + j];
					m[g] = s;
					[[unroll]] for (uint k = 0; k < DPL; k++) acc[g][k] = VT == 6 ? round_f16(acc[g][k] * ms) : acc[g][k] * ms;
				} else {
					vs = wgt[g * WG + j];
				}
				[[unroll]] for (uint k = 0; k < DPL; k++) {
					acc[g][k] = fma_exact(vd[k], vs, acc[g][k]);
					if (VT == 6) {
						acc[g][k] = round_f16(acc[g][k]);
					}
				}
				l[g] = fma_exact(l[g], ms, vs);
			}
		}
		barrier(); // the next tile's scores overwrite ss
	}
	[[unroll]] for (uint g = 0; g < G; g++) {
		if (SINK != 0) {
			float sk = sinks[kvh * G + g];
			float ms = 1.0, vs = 1.0;
			if (sk > m[g]) {
				ms = exp_exact(m[g] - sk);
				[[unroll]] for (uint k = 0; k < DPL; k++) acc[g][k] *= ms;
			} else {
				vs = exp_exact(sk - m[g]);
			}
			l[g] = fma_exact(l[g], ms, vs);
		}
		float inv = 1.0 / l[g];
		[[unroll]] for (uint k = 0; k < DPL; k++) {
			uint e = lane + k * WG;
			if (e < HD) {
				if (ROTV != 0) {
					sx[g * HD + e] = acc[g][k] * inv;
				} else {
					o[qb + g * HD + e] = acc[g][k] * inv;
				}
			}
		}
	}
	if (ROTV != 0) {
		barrier();
		fwht(ROTV, p.rvs);
		for (uint i = lane; i < G * HD; i += WG) {
			o[qb + i] = sx[i];
		}
	}
}
