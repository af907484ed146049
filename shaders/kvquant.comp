#version 450
// The write of a block-quantized KV cache (kvquant.glsl's layout): the
// rope kernel (rope.glsl with KVF32 2) leaves the step's rotated keys and
// the values in f32 staging rows [token][kv head][dim]; one workgroup per
// (token, kv head, keys or values) takes a row, multiplies each ROT-chunk
// by the orthonormal Walsh-Hadamard matrix when the cache rotates (the
// scale first, then the fast transform's butterflies in f32, as ggml's
// CPU fwht and the CPU backend's hadamard), and quantizes its blocks once, as ggml's
// reference quantizers do (iq4_nl: quantize_row_iq4_nl_ref), into the
// row's slot pos % slots. A lane takes
// a block. The plain half of a mixed pair (f16, f32) is stored as it is,
// f16 rounded to nearest even.
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint HD = 64;
layout(constant_id = 1) const uint KT = 1;   // key type (kvquant.glsl's codes)
layout(constant_id = 2) const uint VT = 1;   // value type
layout(constant_id = 3) const uint ROTK = 0; // Hadamard order of the keys (0: none)
layout(constant_id = 4) const uint ROTV = 0; // of the values

#include "kvquant.glsl"

layout(std430, binding = 0) readonly buffer KS { float ks[]; }; // [token][kv head][dim]
layout(std430, binding = 1) readonly buffer VS { float vs[]; };
layout(binding = 2, r32ui) uniform writeonly uimageBuffer KC;
layout(binding = 3, r32ui) uniform writeonly uimageBuffer VC;
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };

layout(push_constant) uniform Push {
	uint slots;
	float rks; // 1/sqrt(ROTK)
	float rvs; // 1/sqrt(ROTV)
} p;

shared float x[HD];

// iq4nl_index is ggml's best_index_int8 over iq4_nl's table: the nearest
// entry to v, the upper of two equally near.
uint iq4nl_index(float v) {
	if (v <= float(iq4nl_value(0u))) {
		return 0u;
	}
	if (v >= float(iq4nl_value(15u))) {
		return 15u;
	}
	uint ml = 0u, mu = 15u;
	while (mu - ml > 1u) {
		uint mav = (ml + mu) / 2u;
		if (v < float(iq4nl_value(mav))) {
			mu = mav;
		} else {
			ml = mav;
		}
	}
	precise float below = v - float(iq4nl_value(mu - 1u));
	precise float above = float(iq4nl_value(mu)) - v;
	return below < above ? mu - 1u : mu;
}
shared float sd[NB];

void main() {
	uint t = gl_WorkGroupID.x, h = gl_WorkGroupID.y;
	bool isK = gl_WorkGroupID.z == 0;
	if (t >= ntok) {
		return;
	}
	uint kvheads = gl_NumWorkGroups.y;
	uint lane = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	uint src = (t * kvheads + h) * HD;
	for (uint i = lane; i < HD; i += wg) {
		x[i] = isK ? ks[src + i] : vs[src + i];
	}
	barrier();
	uint n = isK ? ROTK : ROTV;
	if (n != 0) {
		float sc = isK ? p.rks : p.rvs;
		for (uint i = lane; i < HD; i += wg) {
			x[i] *= sc;
		}
		barrier();
		for (uint s = 1; s < n; s *= 2) {
			for (uint pr = lane; pr < HD / 2; pr += wg) {
				uint i = (pr / s) * 2 * s + pr % s;
				float a = x[i], b = x[i + s];
				x[i] = a + b;
				x[i + s] = a - b;
			}
			barrier();
		}
	}
	uint typ = isK ? KT : VT;
	uint rows = kvheads * p.slots;
	uint row = h * p.slots + (pos + t) % p.slots;
	uint cwr = cw(typ);
	if (plain(typ)) {
		// the plain half of a mixed pair: f16 rounded to nearest even as
		// the CPU backend's store, or the f32 row as it is
		for (uint w = lane; w < cwr; w += wg) {
			uint word = typ == 7 ? floatBitsToUint(x[w]) : packHalf2x16(vec2(f16_exact(x[2 * w]), f16_exact(x[2 * w + 1])));
			uint at = row * cwr + w;
			if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
		}
		return; // uniform: typ is the workgroup's
	}
	for (uint b = lane; b < NB; b += wg) {
		uint o = b * 32;
		float d;
		if (typ == 1) {
			// quantize_row_q8_0_ref: d = amax/127, codes roundf(x/d)
			float amax = 0.0;
			for (uint j = 0; j < 32; j++) amax = max(amax, abs(x[o + j]));
			d = amax / 127.0;
			float id = d != 0.0 ? 1.0 / d : 0.0;
			for (uint w = 0; w < 8; w++) {
				uint word = 0;
				for (uint j = 0; j < 4; j++) {
					precise float v = x[o + 4 * w + j] * id;
					int c = int(round_half_away(v));
					word |= (uint(c) & 0xFFu) << (8 * j);
				}
				uint at = row * cwr + b * 8 + w;
				if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
			}
		} else if (typ == 8) {
			// quantize_row_iq4_nl_ref (the CPU backend's quantizeIQ4NL):
			// no importance weights, no scale search — each value's
			// nearest table entry at d = max/-127 (max the signed value of
			// largest magnitude, the first on ties), then the scale the
			// least-squares fit Σw·q·x / Σw·q² over those entries with
			// weights x², every product and sum rounded in f32 in element
			// order; a block below 1e-15 gets scale 0 and zero codes
			float amax = 0.0, mx = 0.0;
			for (uint j = 0; j < 32; j++) {
				float v = x[o + j];
				if (abs(v) > amax) {
					amax = abs(v);
					mx = v;
				}
			}
			bool zero = amax < 1e-15;
			precise float d0 = mx / -127.0;
			precise float id = 1.0 / d0;
			precise float sumqx = 0.0, sumq2 = 0.0;
			for (uint w = 0; w < 4; w++) {
				uint word = 0;
				for (uint j = 0; j < 8 && !zero; j++) {
					float v = x[o + 8 * w + j];
					precise float al = id * v;
					uint l = iq4nl_index(al);
					float qv = float(iq4nl_value(l));
					precise float ww = v * v;
					precise float wq = ww * qv;
					precise float tx = wq * v;
					precise float tq = wq * qv;
					sumqx = sumqx + tx;
					sumq2 = sumq2 + tq;
					word |= l << (4 * j);
				}
				uint at = row * cwr + b * 4 + w;
				if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
			}
			precise float fit = sumqx / sumq2;
			d = zero ? 0.0 : fit;
		} else {
			// quantize_row_q4_0_ref/q5_0_ref: the signed value of largest
			// magnitude (the first on ties) / -8 (-16), codes
			// min(15 (31), trunc(x/d + 8.5 (16.5))); q4_1_ref/q5_1_ref:
			// d = (max - min)/15 (31), codes trunc((x - min)/d + 0.5)
			bool five = typ == 3 || typ == 5;
			float amax = 0.0, mx = 0.0, lo = 3.402823466e38, hi = -3.402823466e38;
			for (uint j = 0; j < 32; j++) {
				float v = x[o + j];
				if (amax < abs(v)) {
					amax = abs(v);
					mx = v;
				}
				if (v < lo) lo = v;
				if (v > hi) hi = v;
			}
			float top = five ? 31.0 : 15.0;
			precise float dd = has_min(typ) ? (hi - lo) / top : mx / (five ? -16.0 : -8.0);
			d = dd;
			float id = d != 0.0 ? 1.0 / d : 0.0;
			float off = has_min(typ) ? 0.5 : (five ? 16.5 : 8.5);
			uint hb = 0;
			for (uint w = 0; w < 4; w++) {
				uint word = 0;
				for (uint j = 0; j < 8; j++) {
					precise float xs = has_min(typ) ? x[o + 8 * w + j] - lo : x[o + 8 * w + j];
					precise float v = xs * id;
					precise float vo = v + off;
					uint c = min(uint(top), uint(int(vo)));
					word |= (c & 0xFu) << (4 * j);
					hb |= ((c >> 4) & 1u) << (8 * w + j);
				}
				uint at = row * cwr + b * 4 + w;
				if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
			}
			if (five) {
				uint at = row * cwr + HD / 8 + b;
				if (isK) imageStore(KC, int(at), uvec4(hb)); else imageStore(VC, int(at), uvec4(hb));
			}
			if (has_min(typ)) {
				uint at = rows * cwr + row * NB + b;
				uint word = packHalf2x16(vec2(f16_exact(d), f16_exact(lo)));
				if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
			}
		}
		sd[b] = f16_exact(d);
	}
	barrier();
	if (has_min(typ)) {
		return; // the scales went with the minima
	}
	for (uint w = lane; w < SW; w += wg) {
		uint hi = 2 * w + 1 < NB ? packHalf2x16(vec2(sd[2 * w + 1], 0.0)) : 0u;
		uint word = (packHalf2x16(vec2(sd[2 * w], 0.0)) & 0xFFFFu) | (hi << 16);
		uint at = rows * cwr + row * SW + w;
		if (isK) imageStore(KC, int(at), uvec4(word)); else imageStore(VC, int(at), uvec4(word));
	}
}
