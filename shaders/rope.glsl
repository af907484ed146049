// Q/K normalization, rotary embedding and the key/value cache write of one
// token, shared by rope.comp (a workgroup per token of a step) and
// matvec_sg.comp (the last workgroup of a decode step's Q|K|V product, its
// ROPE epilogue). q (normalized, rotated, scaled) goes to Q, k (normalized,
// rotated) and v to the layer's caches at position pos+t, head-major
// [kv head][slot][dim], where a position's slot is pos % slots (a sliding-
// window layer's cache is a ring; a full cache has slots = context). cos and
// sin come from the step buffer (one table per distinct RoPE base and
// scale), computed on the host in float64 exactly as the reference backend
// does. A lane handles two adjacent elements so the F16 cache is written as
// packed pairs.
//
// QKNORM 1 RMS-normalizes each head of Q and K with one [HD] weight per
// side (qwen3, gemma3); 2 normalizes all of Q and all of K as two vectors
// with [heads*HD] / [kvheads*HD] weights (olmo2). As ggml: (x * scale) * w,
// before RoPE. The sums of squares are taken first, a subgroup per head,
// into shared memory. VNORM (with QKNORM 1) also RMS-normalizes each V
// head, without a weight (gemma4).
//
// A layer that reads another layer's cache (gemma4's KV-shared layers) is
// run with kvheads 0: only Q is computed, and the caches are not written.
//
// The includer defines, before including this file:
//   ROPE_IN(i)      the f32 value of element i of the Q|K|V rows
//   ROPE_CID        the first of seven consecutive constant_ids (HD .. QKEXACT)
//   ROPE_BIND       the first of six consecutive bindings (table .. KN)
//   ROPE_NSCALE     the length of the norms' shared array: MAXG with
//                   QKNORM 1, else 2 (1 where the kernel never rotates)
// and declares the Step block (ntok, pos). The layer's parameters come as
// a RopeArgs (a member of the includer's push constants). A product that
// takes the rotation as its epilogue also defines
//   ROPE_ARRIVE_BIND the binding of its counter of finished workgroups
// and calls rope_after_product at its end, from every workgroup.

layout(constant_id = ROPE_CID + 0) const uint HD = 64;     // head size
layout(constant_id = ROPE_CID + 1) const uint DIMS = 64;   // rotated dimensions per head
layout(constant_id = ROPE_CID + 2) const uint NEOX = 0;    // rotate (i, i+DIMS/2) instead of (2i, 2i+1)
layout(constant_id = ROPE_CID + 3) const uint KVF32 = 0;   // cache element is f32 (else f16); 2: f32 staging rows of a quantized cache
layout(constant_id = ROPE_CID + 4) const uint QKNORM = 0;  // 0 none, 1 per head, 2 over the full width
layout(constant_id = ROPE_CID + 5) const uint VNORM = 0;   // 1: V heads RMS-normalized without a weight (needs QKNORM 1)
// 1: the norms sum their squares as ggml's CPU rms_norm (common.glsl's
// rms_scale), as an all-F32 model's other norms do (runtime/vk
// Matrix.cpuOrder); 0: in f32, as the quantized models' norms, where the
// exact sum gave no CPU bits and moved synth-gemma3-Q4_K_M past 0.25
layout(constant_id = ROPE_CID + 6) const uint QKEXACT = 0;

// Heads (Q, K and, with VNORM, V together) a per-head norm can hold; the
// host checks it.
const uint MAXG = 512;

layout(binding = ROPE_BIND + 0) uniform usamplerBuffer COSSIN; // [token][pair] (cos, sin) bits, R32G32_UINT view
layout(std430, binding = ROPE_BIND + 1) writeonly buffer Q { float q[]; };
// The caches are written as R32_UINT storage texel buffers (an f16 pair or
// an f32 per texel), so their size is bounded by maxTexelBufferElements,
// not by the smaller maxStorageBufferRange.
layout(binding = ROPE_BIND + 2, r32ui) uniform writeonly uimageBuffer KC;
layout(binding = ROPE_BIND + 3, r32ui) uniform writeonly uimageBuffer VC;
layout(binding = ROPE_BIND + 4) uniform usamplerBuffer QN;   // Q norm weight, f32 bits, R32_UINT view
layout(binding = ROPE_BIND + 5) uniform usamplerBuffer KN;   // K norm weight

struct RopeArgs {
	uint heads;
	uint kvheads;
	uint qkvstride; // floats per token in the Q|K|V rows
	uint qstride;   // floats per token in Q
	uint slots;     // cache positions (the ring's size on a sliding-window layer)
	uint rope;      // 0: a layer without RoPE
	float qscale;   // Q × qscale after RoPE (1 unless the model scales Q, not the scores)
	float eps;      // of the Q/K norm
	// The attention temperature tuning (mistral3): Q at position p also ×
	// 1 + tbeta·ln(1 + ⌊(p + toff)/tlen⌋); tbeta 0 = off.
	float tbeta;
	uint tlen;
	float toff;
};

// qscale_at is Q's multiplier at position at: qscale, times the temperature
// where the model tunes it (the quotient in float as llama.cpp's is).
float qscale_at(RopeArgs r, uint at) {
	if (r.tbeta == 0.0) {
		return r.qscale;
	}
	float f = floor((float(at) + r.toff) / float(r.tlen));
	return r.qscale * (log(f + 1.0) * r.tbeta + 1.0);
}

shared float nscale[ROPE_NSCALE];

// value of element d of the Q (isq) or K head starting at row offset h0,
// normalized when the model does: g is its group in nscale, wb the index of
// its first weight. The call sites pass isq as a constant, so each inlined
// copy fetches from one weight buffer only.
float qk(RopeArgs r, uint base, uint h0, uint d, bool isq, uint g, uint wb) {
	float x = ROPE_IN(base + h0 + d);
	if (QKNORM == 0) {
		return x;
	}
	float w = uintBitsToFloat(isq ? texelFetch(QN, int(wb + d)).x : texelFetch(KN, int(wb + d)).x);
	return (x * nscale[g]) * w;
}

// rotated value of element d of that head at the step's token t
float rot(RopeArgs r, uint base, uint h0, uint d, uint t, bool isq, uint g, uint wb) {
	float xd = qk(r, base, h0, d, isq, g, wb);
	if (d >= DIMS || r.rope == 0) {
		return xd;
	}
	const uint half_ = DIMS / 2;
	uint i = NEOX != 0 ? d % half_ : d / 2;
	bool first = NEOX != 0 ? d < half_ : (d & 1u) == 0;
	uint partner = NEOX != 0 ? (first ? d + half_ : d - half_) : d ^ 1u;
	float xp = qk(r, base, h0, partner, isq, g, wb);
	uvec2 cs = texelFetch(COSSIN, int(t * half_ + i)).xy;
	float c = uintBitsToFloat(cs.x), s = uintBitsToFloat(cs.y);
	// a·c - b·s and a·s + b·c with the first product fused (one FMA) and
	// the second rounded, as GCC contracts ggml's CPU rope (and as the CPU
	// backend computes it): rounded as two products and a sum, a third of
	// a rotated head's values moved by an ulp, which a quantized cache's
	// codes turn into steps
	precise float second = first ? xp * s : xd * c;
	return first ? fma_exact(xd, c, -second) : fma_exact(xp, s, second);
}

// norm_scales fills nscale: 1/rms of each normalized group (a head, or
// all of Q and all of K), one subgroup per group.
void norm_scales(RopeArgs r, uint base) {
	uint qw = r.heads * HD, kvw = r.kvheads * HD;
	uint groups = QKNORM == 1 ? r.heads + r.kvheads * (VNORM != 0 ? 2 : 1) : 2;
	for (uint g = gl_SubgroupID; g < groups; g += gl_NumSubgroups) {
		uint start = QKNORM == 1 ? g * HD : (g == 0 ? 0 : qw);
		uint len = QKNORM == 1 ? HD : (g == 0 ? qw : kvw);
		if (QKEXACT != 0) {
			vec2 ss = vec2(0.0);
			for (uint i = gl_SubgroupInvocationID; i < len; i += gl_SubgroupSize) {
				ss = sq_add(ss, ROPE_IN(base + start + i));
			}
			ss = subgroup_pair_sum(ss);
			if (subgroupElect()) {
				nscale[g] = rms_scale(ss, float(len), r.eps);
			}
			continue;
		}
		float ss = 0.0;
		for (uint i = gl_SubgroupInvocationID; i < len; i += gl_SubgroupSize) {
			float x = ROPE_IN(base + start + i);
			ss += x * x;
		}
		ss = subgroupAdd(ss);
		if (subgroupElect()) {
			nscale[g] = 1.0 / sqrt(ss / float(len) + r.eps);
		}
	}
	barrier();
}

// rope_token writes token t of the step, whose Q|K|V row starts at base:
// the whole workgroup calls it (the norms end in a barrier).
void rope_token(RopeArgs r, uint t, uint base) {
	uint at = pos + t;
	uint slot = at % r.slots;
	uint qw = r.heads * HD, kvw = r.kvheads * HD;
	uint pairs = (qw + 2 * kvw) / 2;
	float qs = qscale_at(r, at);
	if (QKNORM != 0) {
		norm_scales(r, base);
	}
	for (uint e = gl_LocalInvocationID.x; e < pairs; e += gl_WorkGroupSize.x) {
		uint d0 = 2 * e;
		if (d0 < qw) {
			uint h = d0 / HD, d = d0 % HD;
			uint g = QKNORM == 1 ? h : 0, wb = QKNORM == 1 ? 0 : h * HD;
			q[t * r.qstride + d0] = rot(r, base, h * HD, d, t, true, g, wb) * qs;
			q[t * r.qstride + d0 + 1] = rot(r, base, h * HD, d + 1, t, true, g, wb) * qs;
			continue;
		}
		bool isK = d0 < qw + kvw;
		uint off = d0 - qw - (isK ? 0 : kvw);
		uint h = off / HD, d = off % HD;
		float a, b;
		if (isK) {
			uint g = QKNORM == 1 ? r.heads + h : 1, wb = QKNORM == 1 ? 0 : h * HD;
			a = rot(r, base, qw + h * HD, d, t, false, g, wb);
			b = rot(r, base, qw + h * HD, d + 1, t, false, g, wb);
		} else {
			uint hb = base + qw + kvw + h * HD;
			a = ROPE_IN(hb + d);
			b = ROPE_IN(hb + d + 1);
			if (VNORM != 0) {
				float sc = nscale[r.heads + r.kvheads + h];
				a *= sc;
				b *= sc;
			}
		}
		uint cell = (h * r.slots + slot) * HD + d;
		if (KVF32 == 2) {
			// a quantized cache: the step's rows [token][kv head][dim] in
			// f32 for kvquant.comp, which rotates and quantizes them
			cell = (t * r.kvheads + h) * HD + d;
		}
		if (KVF32 != 0) {
			if (isK) {
				imageStore(KC, int(cell), uvec4(floatBitsToUint(a)));
				imageStore(KC, int(cell + 1), uvec4(floatBitsToUint(b)));
			} else {
				imageStore(VC, int(cell), uvec4(floatBitsToUint(a)));
				imageStore(VC, int(cell + 1), uvec4(floatBitsToUint(b)));
			}
		} else {
			uint packed = packHalf2x16(vec2(a, b));
			if (isK) {
				imageStore(KC, int(cell / 2), uvec4(packed));
			} else {
				imageStore(VC, int(cell / 2), uvec4(packed));
			}
		}
	}
}

#ifdef ROPE_ARRIVE_BIND
layout(std430, binding = ROPE_ARRIVE_BIND) coherent buffer Arrive { uint arrive[]; }; // workgroups done
shared bool rope_last_wg;

// rope_after_product is a Q|K|V product's epilogue for its one token t:
// once every workgroup has stored its rows, the last to finish (a counter,
// as attention.comp merges its splits) resets the counter for the next
// layer's product and rotates the token. The whole workgroup calls it, after
// its last store. The product's Y must be coherent, so the last workgroup
// reads the others' rows, not stale lines.
void rope_after_product(RopeArgs r, uint t) {
	// every lane makes its rows visible before its workgroup counts itself in
	memoryBarrierBuffer();
	barrier();
	if (gl_LocalInvocationIndex == 0) {
		rope_last_wg = atomicAdd(arrive[0], 1u) + 1 == gl_NumWorkGroups.x * gl_NumWorkGroups.y;
		if (rope_last_wg) {
			arrive[0] = 0u;
		}
	}
	barrier();
	if (rope_last_wg) {
		memoryBarrierBuffer();
		rope_token(r, t, t * r.qkvstride);
	}
}
#endif
