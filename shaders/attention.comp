#version 450
// Causal GQA attention over the KV cache for the step's tokens: one
// workgroup (one subgroup) per (KV head, token) computes the G query heads
// that share the KV head, so keys and values are fetched once for all of
// them. Lane l takes positions l, l+WG, ...; each keeps a running max, sum
// and weighted value sum (online softmax, exp of non-positive numbers only),
// and the lanes are combined at the end. With an F16 cache the query is
// rounded to F16 first, as llama.cpp does.
//
// ORDERED instead walks the positions in order, the lanes splitting the
// head's dimensions, and rounds exactly as llama.cpp's CPU flash attention
// (and our reference backend) does: with an F16 cache the weighted value
// sum is kept in F16 and rounded after every rescale and every added value,
// and the running sum and the accumulation are fused multiply-adds. Those
// roundings decide which way later 8-bit activation roundings go, so this
// is what makes the backends agree end to end on quantized models. It is
// chosen on CPU devices, where a workgroup runs its positions one after
// another anyway; GPUs keep the position-parallel form.
//
// A sliding-window layer sees only keys with q - k < window, and its cache
// may be a ring of slots positions (position at lives in slot at % slots).
// CAP soft-caps the scores as llama.cpp's flash attention does:
// s = cap·tanh(dot·scale) with scale already divided by cap on the host.
//
// SPLIT (position-parallel form only) is flash-decoding: workgroup z of a
// (KV head, token) takes only the SPLIT visible positions from
// first + z·SPLIT on, so a long context spreads over many workgroups
// instead of a few. Out then holds per query head and split the
// unnormalized value sum, the max and the sum of exponentials
// ([token][head][split][HD+2]), and attn_combine merges the splits. A
// split past the span writes a neutral partial (max -1e30, sums 0).
//
// SINK (gpt-oss): each query head has a learned logit that joins the
// softmax's denominator with no value, folded in after the positions as
// llama.cpp's flash attention does: if sink > M, the value sum and the sum
// of exponentials are rescaled by exp(M - sink) and 1 added, else
// exp(sink - M) is added. With SPLIT the partials stay without it and
// attn_combine folds it in once per head, after merging the splits.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HD = 64;   // head size, a multiple of 8
layout(constant_id = 2) const uint G = 1;     // query heads per KV head
layout(constant_id = 3) const uint KVF32 = 0;
layout(constant_id = 4) const uint ORDERED = 0;
layout(constant_id = 5) const uint LANES = 8; // the workgroup size, for ORDERED
layout(constant_id = 6) const uint CAP = 0;   // soft-cap the scores
layout(constant_id = 7) const uint SPLIT = 0; // positions per split (0: one split)
layout(constant_id = 8) const uint SINK = 0;  // 1: a sink logit per query head (SINKS)
const uint DPL = (HD + LANES - 1) / LANES;    // dimensions per lane, for ORDERED

layout(binding = 0) uniform usamplerBuffer Q;  // [token][head][dim] f32 bits, 4 per texel
layout(binding = 1) uniform usamplerBuffer KC; // [kv head][position][dim], 8 halves (4 floats) per texel
layout(binding = 2) uniform usamplerBuffer VC;
layout(std430, binding = 3) writeonly buffer Out { float o[]; };
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 5) readonly buffer Sinks { float sinks[]; }; // [head], with SINK

layout(push_constant) uniform Push {
	uint qstride;  // floats per token in Q and Out
	uint slots;    // cache positions per head (a ring on a sliding-window layer)
	float scale;   // of the scores (1/sqrt(HD) or the model's; ÷ cap with CAP)
	float cap;     // the soft-cap, with CAP
	uint window;   // keys with q - k >= window are masked; 0: none
} p;

// score turns a dot product into the softmax's input.
float score(float dot) {
	float s = dot * p.scale;
	return CAP != 0 ? p.cap * tanh(s) : s;
}

// first_pos is the first key position query position at sees.
uint first_pos(uint at) { return p.window != 0 && at + 1 > p.window ? at + 1 - p.window : 0; }

const uint PER = KVF32 != 0 ? 4 : 8; // elements per texel
const uint TX = HD / PER;            // texels per cache row

float qv[G][HD];
float acc[G][HD];

// texel_elem is element e of a cache texel (PER elements).
float texel_elem(uvec4 w, const uint e) {
	if (KVF32 != 0) {
		return uintBitsToFloat(w[e]);
	}
	vec2 h = unpackHalf2x16(w[e / 2]);
	return (e % 2) == 0 ? h.x : h.y;
}

// cache_elem is element e of the cache row starting at texel row.
float cache_elem(usamplerBuffer c, uint row, uint e) {
	if (KVF32 != 0) {
		return uintBitsToFloat(texelFetch(c, int(row + e / 4))[e % 4]);
	}
	vec2 h = unpackHalf2x16(texelFetch(c, int(row + e / 8))[(e % 8) / 2]);
	return (e % 2) == 0 ? h.x : h.y;
}

float kv_round(float x) { return KVF32 != 0 ? x : round_f16(x); }

void main_ordered() {
	uint kvh = gl_WorkGroupID.x;
	uint t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint lane = gl_LocalInvocationID.x;
	uint span = pos + t + 1;
	float qd[G][DPL], acc[G][DPL], m[G], l[G];
	[[unroll]] for (uint g = 0; g < G; g++) {
		uint qb = t * p.qstride + (kvh * G + g) * HD;
		[[unroll]] for (uint j = 0; j < DPL; j++) {
			uint e = lane * DPL + j;
			float v = e < HD ? uintBitsToFloat(texelFetch(Q, int((qb + e) / 4))[(qb + e) % 4]) : 0.0;
			qd[g][j] = kv_round(v);
			acc[g][j] = 0.0;
		}
		m[g] = -1e30;
		l[g] = 0.0;
	}
	uint rowb = kvh * p.slots * TX;
	uint at0 = first_pos(pos + t);
	uint slot = at0 % p.slots;
	for (uint at = at0; at < span; at++, slot = slot + 1 == p.slots ? 0 : slot + 1) {
		float kd[DPL], vd[DPL];
		if (DPL % PER == 0 && DPL * LANES == HD) {
			// whole texels per lane: one fetch per PER elements
			[[unroll]] for (uint i = 0; i < DPL / PER; i++) {
				uint tx = rowb + slot * TX + lane * (DPL / PER) + i;
				uvec4 kw = texelFetch(KC, int(tx)), vw = texelFetch(VC, int(tx));
				[[unroll]] for (uint e = 0; e < PER; e++) {
					kd[PER * i + e] = texel_elem(kw, e);
					vd[PER * i + e] = texel_elem(vw, e);
				}
			}
		} else {
			[[unroll]] for (uint j = 0; j < DPL; j++) {
				uint e = min(lane * DPL + j, HD - 1);
				bool ok = lane * DPL + j < HD;
				kd[j] = ok ? cache_elem(KC, rowb + slot * TX, e) : 0.0;
				vd[j] = ok ? cache_elem(VC, rowb + slot * TX, e) : 0.0;
			}
		}
		[[unroll]] for (uint g = 0; g < G; g++) {
			float s = 0.0;
			[[unroll]] for (uint j = 0; j < DPL; j++) s += qd[g][j] * kd[j];
			s = score(subgroupAdd(s));
			float ms = 1.0, vs = 1.0;
			if (s > m[g]) {
				ms = exp(m[g] - s);
				m[g] = s;
				[[unroll]] for (uint j = 0; j < DPL; j++) acc[g][j] = kv_round(acc[g][j] * ms);
			} else {
				vs = exp(s - m[g]);
			}
			[[unroll]] for (uint j = 0; j < DPL; j++) acc[g][j] = kv_round(fma(vd[j], vs, acc[g][j]));
			l[g] = fma(l[g], ms, vs);
		}
	}
	[[unroll]] for (uint g = 0; g < G; g++) {
		if (SINK != 0) {
			// as the CPU backend's attendPortable: the rescale unrounded
			float sk = sinks[kvh * G + g];
			float ms = 1.0, vs = 1.0;
			if (sk > m[g]) {
				ms = exp(m[g] - sk);
				[[unroll]] for (uint j = 0; j < DPL; j++) acc[g][j] *= ms;
			} else {
				vs = exp(sk - m[g]);
			}
			l[g] = fma(l[g], ms, vs);
		}
		float inv = 1.0 / l[g];
		uint ob = t * p.qstride + (kvh * G + g) * HD;
		[[unroll]] for (uint j = 0; j < DPL; j++) {
			uint e = lane * DPL + j;
			if (e < HD) {
				o[ob + e] = acc[g][j] * inv;
			}
		}
	}
}

void main() {
	if (ORDERED != 0) {
		main_ordered();
		return;
	}
	uint kvh = gl_WorkGroupID.x;
	uint t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint lane = gl_LocalInvocationID.x;
	uint span = pos + t + 1;
	[[unroll]] for (uint g = 0; g < G; g++) {
		uint qb = (t * p.qstride + (kvh * G + g) * HD) / 4;
		[[unroll]] for (uint i = 0; i < HD / 4; i++) {
			vec4 v = uintBitsToFloat(texelFetch(Q, int(qb + i)));
			if (KVF32 == 0) {
				v = vec4(unpackHalf2x16(packHalf2x16(v.xy)), unpackHalf2x16(packHalf2x16(v.zw)));
			}
			qv[g][4 * i] = v.x;
			qv[g][4 * i + 1] = v.y;
			qv[g][4 * i + 2] = v.z;
			qv[g][4 * i + 3] = v.w;
		}
		[[unroll]] for (uint d = 0; d < HD; d++) acc[g][d] = 0.0;
	}
	float m[G], l[G];
	[[unroll]] for (uint g = 0; g < G; g++) {
		m[g] = -1e30;
		l[g] = 0.0;
	}
	uint rowb = kvh * p.slots * TX;
	uint lo = first_pos(pos + t);
	uint hi = span;
	if (SPLIT != 0) {
		lo += gl_WorkGroupID.z * SPLIT;
		hi = min(hi, lo + SPLIT);
	}
	for (uint at = lo + lane; at < hi; at += gl_WorkGroupSize.x) {
		// K and V are streamed a texel at a time rather than held as rows:
		// a lane already keeps G*HD query and accumulator values, and on a
		// GPU every row held would be registers taken from occupancy.
		uint row = rowb + (at % p.slots) * TX;
		float sc[G];
		[[unroll]] for (uint g = 0; g < G; g++) sc[g] = 0.0;
		[[unroll]] for (uint i = 0; i < TX; i++) {
			uvec4 w = texelFetch(KC, int(row + i));
			[[unroll]] for (uint e = 0; e < PER; e++) {
				float kv = texel_elem(w, e);
				[[unroll]] for (uint g = 0; g < G; g++) sc[g] += qv[g][PER * i + e] * kv;
			}
		}
		float a[G], b[G];
		[[unroll]] for (uint g = 0; g < G; g++) {
			float s = score(sc[g]);
			float mn = max(m[g], s);
			a[g] = exp(m[g] - mn);
			b[g] = exp(s - mn);
			m[g] = mn;
			l[g] = l[g] * a[g] + b[g];
		}
		[[unroll]] for (uint i = 0; i < TX; i++) {
			uvec4 w = texelFetch(VC, int(row + i));
			[[unroll]] for (uint e = 0; e < PER; e++) {
				float vv = texel_elem(w, e);
				[[unroll]] for (uint g = 0; g < G; g++) acc[g][PER * i + e] = acc[g][PER * i + e] * a[g] + b[g] * vv;
			}
		}
	}
	[[unroll]] for (uint g = 0; g < G; g++) {
		float mx = subgroupMax(m[g]);
		float f = exp(m[g] - mx);
		float sum = subgroupAdd(l[g] * f);
		if (SINK != 0 && SPLIT == 0) {
			float sk = sinks[kvh * G + g];
			if (sk > mx) {
				float ms = exp(mx - sk);
				sum = sum * ms + 1.0;
				f *= ms;
			} else {
				sum += exp(sk - mx);
			}
		}
		float inv = SPLIT != 0 ? 1.0 : 1.0 / sum;
		uint ob = t * p.qstride + (kvh * G + g) * HD;
		if (SPLIT != 0) {
			uint heads = gl_NumWorkGroups.x * G;
			ob = ((t * heads + kvh * G + g) * gl_NumWorkGroups.z + gl_WorkGroupID.z) * (HD + 2);
			if (lane == 0) {
				o[ob + HD] = mx;
				o[ob + HD + 1] = sum;
			}
		}
		[[unroll]] for (uint d = 0; d < HD; d++) {
			float s = subgroupAdd(acc[g][d] * f);
			if (lane == d % gl_WorkGroupSize.x) {
				o[ob + d] = s * inv;
			}
		}
	}
}
