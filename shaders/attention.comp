#version 450
// Causal GQA attention over the KV cache for the step's tokens: one
// workgroup per (KV head, token[, split]) computes the G query heads that
// share the KV head, so keys and values are fetched once for all of them.
// With an F16 cache the query is rounded to F16 first, as llama.cpp does.
//
// Two forms. ORDERED walks the positions in order, the lanes splitting the
// head's dimensions, and rounds exactly as llama.cpp's CPU flash attention
// (and our reference backend) does: with an F16 cache the weighted value
// sum is kept in F16 and rounded after every rescale and every added value,
// and the running sum and the accumulation are fused multiply-adds. Those
// roundings decide which way later 8-bit activation roundings go, so this
// is what makes the backends agree end to end on quantized models. It is
// chosen on CPU devices, where a workgroup runs its positions one after
// another anyway, and is the oracle of the GPU form. For a prefill there
// (ORDERED == 2, main_rows) the same roundings run with a token on each
// lane instead of a slice of the head's dimensions.
//
// The GPU form keeps no per-lane array sized by head size × group (a GPU's
// lanes have at most 255 registers): the query heads sit in shared memory,
// and the positions are taken a tile of WG at a time, in two phases. For
// scores each lane takes one position of the tile (its key row fetched a
// texel at a time, the dot products against the shared queries); the
// tile's maximum per row is reduced over subgroups, each lane turns its
// scores into exponentials against the running maximum and leaves them in
// shared memory. For values each lane takes one uint of a value row (two
// F16 or one F32 element) for every G head, the workgroup's lanes forming
// WG/(HD/E) groups over the tile's positions (adjacent lanes read adjacent
// words of a row). Per lane that is E·G accumulators and G scores. Only at
// the end of the workgroup's positions are the groups' sums reduced, once,
// through shared memory. A prefill's workgroup takes QT tokens: its R =
// QT·G query rows (each masking the positions outside its token's causal
// span and window) share every key and value word it fetches, so a
// prompt's cache is read once per tile of tokens, not once per token.
//
// A sliding-window layer sees only keys with q - k < window, and its cache
// may be a ring of slots positions (position at lives in slot at % slots).
// CAP soft-caps the scores as llama.cpp's flash attention does:
// s = cap·tanh(dot·scale) with scale already divided by cap on the host.
//
// SPLIT (GPU form only) is flash-decoding: the z-th of gl_NumWorkGroups.z
// workgroups of a (KV head, token) takes the z-th chunk of the LIVE span
// (the positions filled at this step, read from Step, so one recorded
// command buffer serves every step), chunks being whole multiples of SPLIT
// positions (attnsplit.glsl). Workgroups past the last chunk return at once.
// Each writes per query head its unnormalized value sum, max and sum of
// exponentials to Part ([token][head][split][HD+2]); the last to finish
// (a counter per KV head and token in Arrive) merges the live splits into
// Out (merge_splits), so no second pass and barrier follow.
//
// SINK (gpt-oss): each query head has a learned logit that joins the
// softmax's denominator with no value, folded in after the positions as
// llama.cpp's flash attention does: if sink > M, the value sum and the sum
// of exponentials are rescaled by exp(M - sink) and 1 added, else
// exp(sink - M) is added. With SPLIT the partials stay without it and
// merge_splits folds it in once per head, after merging the splits.
// main_rows's vote: every Vulkan GPU and llvmpipe offer subgroup votes
#extension GL_KHR_shader_subgroup_vote : require
#include "common.glsl"
#include "attnsplit.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HD = 64;   // head size, a multiple of 8
layout(constant_id = 2) const uint G = 1;     // query heads per KV head
layout(constant_id = 3) const uint KVF32 = 0;
layout(constant_id = 4) const uint ORDERED = 0; // 0: the GPU form, 1: ordered, 2: ordered with token lanes
layout(constant_id = 5) const uint LANES = 8; // the workgroup size, for ORDERED
layout(constant_id = 6) const uint CAP = 0;   // soft-cap the scores: 1 the device's tanh, 2 the CPU backend's (tanh_exact)
layout(constant_id = 7) const uint SPLIT = 0; // split granule in positions (0: one split), GPU form
layout(constant_id = 8) const uint SINK = 0;  // 1: a sink logit per query head (SINKS)
layout(constant_id = 9) const uint SGMIN = 4; // the smallest subgroup the driver may use, GPU form
layout(constant_id = 10) const uint QT = 1;   // tokens per workgroup, GPU form (1 with SPLIT)
const uint DPL = (HD + LANES - 1) / LANES;    // dimensions per lane, for ORDERED

layout(binding = 0) uniform usamplerBuffer Q;  // [token][head][dim] f32 bits, 4 per texel
layout(binding = 1) uniform usamplerBuffer KC; // [kv head][position][dim], 8 halves (4 floats) per texel
layout(binding = 2) uniform usamplerBuffer VC; // ordered: as KC; GPU form: one uint (2 halves or a float) per texel
layout(std430, binding = 3) writeonly buffer Out { float o[]; };
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 5) readonly buffer Sinks { float sinks[]; }; // [head], with SINK
// With SPLIT: the partials [token][head][split][HD+2] and a counter of
// finished splits per (token, KV head), back at zero after every step.
layout(std430, binding = 6) coherent buffer Part { float part[]; };
layout(std430, binding = 7) coherent buffer Arrive { uint arrive[]; };

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
	return CAP != 0 ? p.cap * (CAP == 2 ? tanh_exact(s) : tanh(s)) : s;
}

// first_pos is the first key position query position at sees.
uint first_pos(uint at) { return p.window != 0 && at + 1 > p.window ? at + 1 - p.window : 0; }

const uint PER = KVF32 != 0 ? 4 : 8; // elements per texel
const uint TX = HD / PER;            // texels per cache row

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

// kv_round4 is kv_round on each component.
vec4 kv_round4(vec4 x) { return KVF32 != 0 ? x : vec4(round_f16(x.x), round_f16(x.y), round_f16(x.z), round_f16(x.w)); }

// A score is summed in one order by both ordered forms, so that a token
// prefilled (main_rows) and the same token decoded (main_ordered) agree to
// the last bit (a forked reply against a fresh one): LANES chunks of DPL
// dimensions, each a chain of fused multiply-adds, then the chunks added
// one after another from the first. That is what llvmpipe made of the
// dimensions form's subgroupAdd before main_rows existed, so the results
// did not move; a pairwise order and the CPU backend's vecDot order were
// tried and each moved a synth model's logits past the llama.cpp
// reference's bounds (docs/benchmarks.md, "2026-12-05: a prefill's ordered
// attention with a token on each lane (issue 23)").

// lane_sum adds a value over the LANES lanes in lane order, spelled out
// rather than left to subgroupAdd's implementation.
float lane_sum(float x) {
	precise float s = 0.0;
	[[unroll]] for (uint l = 0; l < LANES; l++) s += subgroupShuffle(x, l);
	return s;
}

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
			[[unroll]] for (uint j = 0; j < DPL; j++) {
				if (lane * DPL + j < HD) {
					s = fma(qd[g][j], kd[j], s);
				}
			}
			s = lane_sum(s);
			s = score(s);
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

const uint WG = gl_WorkGroupSize.x;

const uint HD4 = HD / 4; // vec4s per head

// cache_row4 is the cache row starting at texel row as vec4s.
void cache_row4(usamplerBuffer c, uint row, out vec4 r[HD4]) {
	[[unroll]] for (uint i = 0; i < TX; i++) {
		uvec4 w = texelFetch(c, int(row + i));
		if (KVF32 != 0) {
			r[i] = uintBitsToFloat(w);
		} else {
			r[2 * i] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
			r[2 * i + 1] = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
		}
	}
}

// dot_lanes is the dot product of a query and a key row summed as
// main_ordered sums a score: LANES chunks of DPL dimensions, each a chain
// of fused multiply-adds, then the chunks in order (lane_sum).
float dot_lanes(vec4 q[HD4], vec4 k[HD4]) {
	// precise: a chunk of one product must not fuse into the sum after it
	precise float c[LANES];
	[[unroll]] for (uint l = 0; l < LANES; l++) {
		c[l] = 0.0;
		[[unroll]] for (uint j = 0; j < DPL; j++) {
			uint e = l * DPL + j;
			if (e < HD) {
				c[l] = fma(q[e / 4][e % 4], k[e / 4][e % 4], c[l]);
			}
		}
	}
	precise float t = 0.0;
	[[unroll]] for (uint l = 0; l < LANES; l++) t += c[l];
	return t;
}

// main_rows is the ordered form with a token on each lane (ORDERED == 2),
// for a prefill on a CPU device: a workgroup is one SIMD vector of a tile
// of WG tokens, which walk the tile's positions together, each lane with
// its own query, sums and causal span, summing and rounding exactly as
// main_ordered does (the two agree to the last bit). No lane reduces with another, every scalar step of the softmax is
// done once per token rather than once per lane, and a key or value row
// is fetched once for the tile's tokens.
void main_rows() {
	uint kvh = gl_WorkGroupID.x;
	uint t0 = gl_WorkGroupID.y * WG;
	if (t0 >= ntok) {
		return;
	}
	uint t = t0 + gl_LocalInvocationID.x;
	bool live = t < ntok;
	uint tl = min(t0 + WG, ntok) - 1; // the tile's last token
	uint tq = min(t, tl);
	uint lo = first_pos(pos + tq), span = pos + tq + 1;
	vec4 qd[G][HD4], acc[G][HD4];
	float m[G], l[G];
	[[unroll]] for (uint g = 0; g < G; g++) {
		uint qb = (tq * p.qstride + (kvh * G + g) * HD) / 4;
		[[unroll]] for (uint i = 0; i < HD4; i++) {
			qd[g][i] = kv_round4(uintBitsToFloat(texelFetch(Q, int(qb + i))));
			acc[g][i] = vec4(0.0);
		}
		m[g] = -1e30;
		l[g] = 0.0;
	}
	uint rowb = kvh * p.slots * TX;
	uint at0 = first_pos(pos + t0);
	uint slot = at0 % p.slots;
	for (uint at = at0; at < pos + tl + 1; at++, slot = slot + 1 == p.slots ? 0 : slot + 1) {
		vec4 kd[HD4], vd[HD4];
		cache_row4(KC, rowb + slot * TX, kd);
		cache_row4(VC, rowb + slot * TX, vd);
		bool in_span = at >= lo && at < span;
		[[unroll]] for (uint g = 0; g < G; g++) {
			float s = score(dot_lanes(qd[g], kd));
			if (in_span) {
				float ms = 1.0, vs = 1.0;
				bool up = s > m[g];
				// a new maximum is rare after the first positions: the
				// vote lets llvmpipe skip the rescale, whose lanes it
				// would otherwise run masked at every position
				if (subgroupAny(up) && up) {
					ms = exp(m[g] - s);
					m[g] = s;
					[[unroll]] for (uint i = 0; i < HD4; i++) acc[g][i] = kv_round4(acc[g][i] * ms);
				}
				if (!up) {
					vs = exp(s - m[g]);
				}
				[[unroll]] for (uint i = 0; i < HD4; i++) acc[g][i] = kv_round4(fma(vd[i], vec4(vs), acc[g][i]));
				l[g] = fma(l[g], ms, vs);
			}
		}
	}
	if (!live) {
		return;
	}
	[[unroll]] for (uint g = 0; g < G; g++) {
		if (SINK != 0) {
			// as main_ordered: the rescale unrounded
			float sk = sinks[kvh * G + g];
			float ms = 1.0, vs = 1.0;
			if (sk > m[g]) {
				ms = exp(m[g] - sk);
				[[unroll]] for (uint i = 0; i < HD4; i++) acc[g][i] *= ms;
			} else {
				vs = exp(sk - m[g]);
			}
			l[g] = fma(l[g], ms, vs);
		}
		float inv = 1.0 / l[g];
		uint ob = t * p.qstride + (kvh * G + g) * HD;
		[[unroll]] for (uint i = 0; i < HD4; i++) {
			vec4 r = acc[g][i] * inv;
			o[ob + 4 * i] = r.x;
			o[ob + 4 * i + 1] = r.y;
			o[ob + 4 * i + 2] = r.z;
			o[ob + 4 * i + 3] = r.w;
		}
	}
}

// The GPU form's shared memory (sized 1 for the ordered form, which uses
// none: the specialised pipeline then allocates next to nothing).
const uint E = KVF32 != 0 ? 1 : 2;         // cache elements per uint
const uint U = HD / E;                     // uints per cache row
const uint NPG = U <= WG ? WG / U : 1;     // position groups of the value phase
const uint UPL = U <= WG ? 1 : (U + WG - 1) / WG; // uints per lane of the value phase
const uint NSG = (WG + SGMIN - 1) / SGMIN; // most subgroups per workgroup
const uint R = QT * G;                     // query rows: a tile's tokens × heads [token][g]
shared vec4 sq[ORDERED != 0 ? 1 : R * HD / 4];             // the query rows [row][dim/4]
shared float sp[ORDERED != 0 ? 1 : R * WG];                // the tile's exponentials [row][lane]
shared float sr[ORDERED != 0 ? 1 : R * NSG];               // per-subgroup maxima, then sums
shared float sacc[ORDERED != 0 || NPG < 2 ? 1 : (NPG - 1) * R * HD]; // groups 1.. value sums

// v_elem is element e (< E) of a value uint.
float v_elem(uint w, const uint e) {
	if (KVF32 != 0) {
		return uintBitsToFloat(w);
	}
	vec2 h = unpackHalf2x16(w);
	return e == 0 ? h.x : h.y;
}

shared bool s_last; // this workgroup is the last split to finish

// merge_splits writes the output of token t's G heads on KV head kvh from
// the live splits' partials: each value sum rescaled to the largest max
// and divided by the rescaled sum of exponentials (each lane recomputes
// the max and the sum: a few splits' worth of reads). SINK folds the
// head's sink logit in once, after the merge, as the unsplit form does.
void merge_splits(uint kvh, uint t, uint live) {
	uint z = gl_NumWorkGroups.z, heads = gl_NumWorkGroups.x * G;
	for (uint i = gl_LocalInvocationID.x; i < G * HD; i += WG) {
		uint h = kvh * G + i / HD, d = i % HD;
		uint pb = (t * heads + h) * z * (HD + 2);
		float mx = -1e30;
		for (uint k = 0; k < live; k++) {
			mx = max(mx, part[pb + k * (HD + 2) + HD]);
		}
		float sum = 0.0, v = 0.0;
		for (uint k = 0; k < live; k++) {
			uint kb = pb + k * (HD + 2);
			float w = exp(part[kb + HD] - mx);
			sum += part[kb + HD + 1] * w;
			v += part[kb + d] * w;
		}
		float ms = 1.0;
		if (SINK != 0) {
			float sk = sinks[h];
			if (sk > mx) {
				ms = exp(mx - sk);
				sum = sum * ms + 1.0;
			} else {
				sum += exp(sk - mx);
			}
		}
		o[t * p.qstride + h * HD + d] = v * (ms / sum);
	}
}

void main_gpu() {
	uint kvh = gl_WorkGroupID.x;
	uint t0 = gl_WorkGroupID.y * QT;
	if (t0 >= ntok) {
		return;
	}
	uint lane = gl_LocalInvocationID.x;
	uint tl = min(t0 + QT, ntok) - 1; // the tile's last token
	// every row's positions lie in [lo, hi): the first token's window start
	// to the last token's span; a row masks the positions outside its own
	uint lo = first_pos(pos + t0);
	uint hi = pos + tl + 1;
	uint live = 1; // splits holding positions
	if (SPLIT != 0) { // a decode step: QT is 1
		live = attn_live_splits(hi - lo, gl_NumWorkGroups.z, SPLIT);
		uint c = attn_chunk(hi - lo, gl_NumWorkGroups.z, SPLIT);
		lo += gl_WorkGroupID.z * c;
		if (lo >= hi) {
			return; // past the live span: never counted in Arrive
		}
		hi = min(hi, lo + c);
	}
	// the rows' query heads (a token past the step's repeats the last
	// one's), F16-rounded with an F16 cache, into shared memory
	for (uint i = lane; i < R * HD / 4; i += WG) {
		uint r = i / (HD / 4);
		uint qb = (min(t0 + r / G, tl) * p.qstride + (kvh * G + r % G) * HD) / 4;
		vec4 v = uintBitsToFloat(texelFetch(Q, int(qb + i % (HD / 4))));
		if (KVF32 == 0) {
			v = vec4(unpackHalf2x16(packHalf2x16(v.xy)), unpackHalf2x16(packHalf2x16(v.zw)));
		}
		sq[i] = v;
	}
	// the value phase's share: uints u0 + k·WG of a row, positions grp, grp+NPG, ...
	uint u0 = U <= WG ? lane % U : lane;
	uint grp = U <= WG ? lane / U : 0;
	bool vlane = grp < NPG;
	float acc[R][UPL * E];
	float m[R], l[R];
	[[unroll]] for (uint r = 0; r < R; r++) {
		[[unroll]] for (uint j = 0; j < UPL * E; j++) acc[r][j] = 0.0;
		m[r] = -1e30;
		l[r] = 0.0;
	}
	uint krow = kvh * p.slots * TX; // texels of the keys
	uint vrow = kvh * p.slots * U;  // uints of the values
	barrier();
	for (uint base = lo; base < hi; base += WG) {
		// scores: lane takes position base + lane
		uint at = base + lane;
		float s[R];
		[[unroll]] for (uint r = 0; r < R; r++) s[r] = 0.0;
		if (at < hi) {
			uint row = krow + (at % p.slots) * TX;
			for (uint i = 0; i < TX; i++) {
				uvec4 w = texelFetch(KC, int(row + i));
				[[unroll]] for (uint c = 0; c < PER / 4; c++) {
					vec4 k4 = vec4(texel_elem(w, 4 * c), texel_elem(w, 4 * c + 1), texel_elem(w, 4 * c + 2), texel_elem(w, 4 * c + 3));
					[[unroll]] for (uint r = 0; r < R; r++) s[r] += dot(sq[r * (HD / 4) + i * (PER / 4) + c], k4);
				}
			}
		}
		// which rows see the lane's position (a token's causal span and window)
		bool sees[R];
		[[unroll]] for (uint r = 0; r < R; r++) {
			uint q = pos + min(t0 + r / G, tl);
			sees[r] = at < hi && at <= q && at >= first_pos(q);
			s[r] = sees[r] ? score(s[r]) : -1e30;
			float mx = subgroupMax(s[r]);
			if (subgroupElect()) {
				sr[r * NSG + gl_SubgroupID] = mx;
			}
		}
		barrier();
		// every lane: the tile's maximum, the rescale of what came before,
		// its position's exponentials into shared memory
		float a[R];
		[[unroll]] for (uint r = 0; r < R; r++) {
			float mx = m[r];
			for (uint k = 0; k < gl_NumSubgroups; k++) mx = max(mx, sr[r * NSG + k]);
			a[r] = exp(m[r] - mx);
			m[r] = mx;
			float e = sees[r] ? exp(s[r] - mx) : 0.0;
			sp[r * WG + lane] = e;
			l[r] = l[r] * a[r] + e;
		}
		barrier();
		// values: the lane's uints of each position in its group
		if (vlane) {
			[[unroll]] for (uint r = 0; r < R; r++) {
				[[unroll]] for (uint j = 0; j < UPL * E; j++) acc[r][j] *= a[r];
			}
			uint n = min(WG, hi - base);
			uint j = grp;
			// four positions per trip, their words fetched before any is
			// used: a memory-bound loop needs loads in flight, and a GPU
			// holds few of these workgroups per unit (cost.md)
			for (; j + 3 * NPG < n; j += 4 * NPG) {
				[[unroll]] for (uint k = 0; k < UPL; k++) {
					uint u = u0 + k * WG;
					if (UPL == 1 || u < U) {
						uint w[4];
						[[unroll]] for (uint q = 0; q < 4; q++) w[q] = texelFetch(VC, int(vrow + ((base + j + q * NPG) % p.slots) * U + u)).x;
						[[unroll]] for (uint q = 0; q < 4; q++) {
							[[unroll]] for (uint e = 0; e < E; e++) {
								float v = v_elem(w[q], e);
								[[unroll]] for (uint r = 0; r < R; r++) acc[r][k * E + e] += sp[r * WG + j + q * NPG] * v;
							}
						}
					}
				}
			}
			for (; j < n; j += NPG) {
				uint row = vrow + ((base + j) % p.slots) * U;
				[[unroll]] for (uint k = 0; k < UPL; k++) {
					uint u = u0 + k * WG;
					if (UPL == 1 || u < U) {
						uint w = texelFetch(VC, int(row + u)).x;
						[[unroll]] for (uint e = 0; e < E; e++) {
							float v = v_elem(w, e);
							[[unroll]] for (uint r = 0; r < R; r++) acc[r][k * E + e] += sp[r * WG + j] * v;
						}
					}
				}
			}
		}
		// the next tile's writes of sr and sp wait behind its first barrier
	}
	// the one reduction: sums of exponentials over the subgroups, value
	// sums of groups 1.. into shared memory for group 0
	[[unroll]] for (uint r = 0; r < R; r++) {
		float sum = subgroupAdd(l[r]);
		if (subgroupElect()) {
			sr[r * NSG + gl_SubgroupID] = sum;
		}
	}
	if (NPG > 1 && vlane && grp > 0) {
		[[unroll]] for (uint r = 0; r < R; r++) {
			[[unroll]] for (uint e = 0; e < E; e++) sacc[((grp - 1) * R + r) * HD + u0 * E + e] = acc[r][e];
		}
	}
	barrier();
	if (grp == 0) {
		[[unroll]] for (uint r = 0; r < R; r++) {
			uint t = t0 + r / G, g = r % G;
			if (t > tl) {
				break; // the rows of tokens past the step's
			}
			float sum = 0.0;
			for (uint k = 0; k < gl_NumSubgroups; k++) sum += sr[r * NSG + k];
			float mx = m[r];
			[[unroll]] for (uint q = 1; q < NPG; q++) {
				[[unroll]] for (uint e = 0; e < E; e++) acc[r][e] += sacc[((q - 1) * R + r) * HD + u0 * E + e];
			}
			if (SPLIT != 0) {
				uint heads = gl_NumWorkGroups.x * G;
				uint pb = ((t * heads + kvh * G + g) * gl_NumWorkGroups.z + gl_WorkGroupID.z) * (HD + 2);
				if (lane == 0) {
					part[pb + HD] = mx;
					part[pb + HD + 1] = sum;
				}
				[[unroll]] for (uint k = 0; k < UPL; k++) {
					uint u = u0 + k * WG;
					if (UPL == 1 || u < U) {
						[[unroll]] for (uint e = 0; e < E; e++) part[pb + u * E + e] = acc[r][k * E + e];
					}
				}
				continue;
			}
			float f = 1.0;
			if (SINK != 0) {
				float sk = sinks[kvh * G + g];
				if (sk > mx) {
					f = exp(mx - sk);
					sum = sum * f + 1.0;
				} else {
					sum += exp(sk - mx);
				}
			}
			uint ob = t * p.qstride + (kvh * G + g) * HD;
			float inv = f / sum;
			[[unroll]] for (uint k = 0; k < UPL; k++) {
				uint u = u0 + k * WG;
				if (UPL == 1 || u < U) {
					[[unroll]] for (uint e = 0; e < E; e++) o[ob + u * E + e] = acc[r][k * E + e] * inv;
				}
			}
		}
	}
	if (SPLIT != 0) {
		// The last live split of the (token, KV head) to finish merges
		// them, in place of a combine pass and its barrier: every split
		// makes its partials visible before it counts itself in.
		memoryBarrierBuffer();
		barrier();
		if (lane == 0) {
			uint c = t0 * gl_NumWorkGroups.x + kvh;
			s_last = atomicAdd(arrive[c], 1u) + 1 == live;
			if (s_last) {
				arrive[c] = 0u; // for the next dispatch (the next layer)
			}
		}
		barrier();
		if (s_last) {
			memoryBarrierBuffer();
			merge_splits(kvh, t0, live);
		}
	}
}

void main() {
	if (ORDERED == 2) {
		main_rows();
	} else if (ORDERED != 0) {
		main_ordered();
	} else {
		main_gpu();
	}
}
