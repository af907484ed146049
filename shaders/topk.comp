#version 450
// The head of the next-token distribution, on the device: the largest
// logit, the softmax normalizer Z = Σ exp(l - max) and Σ (l - max)·exp(l - max)
// (for the entropy) over the whole vocabulary, and the k best tokens in
// order (ties by lower id), so that a decode step reads back k entries
// instead of the vocabulary.
//
// topk (MODE 0): workgroup g takes the slice [g·per, (g+1)·per) of the
// vocabulary and writes its record g (one workgroup and per ≥ n: the final
// answer):
//  1. max, then Z and the first histogram (top 8 bits of an order-keeping
//     key of each logit), both reduced through subgroups and shared memory;
//  2. the bucket holding the k-th best key, then a histogram of the next 8
//     bits inside it: every token whose key reaches that 16-bit prefix is a
//     candidate (k plus the few sharing the k-th's prefix);
//  3. candidates gathered into shared memory and ranked by counting.
// More than CAP candidates (a flat distribution) sets overflow, and the
// host reads the whole vocabulary instead.
// topk_merge (MODE 1): one workgroup folds the groups' records into the
// final one: the max of the maxima, Z and Σx·e^x rescaled to it, overflow
// if any slice overflowed, and the k best of the groups' k best (the
// global k best are among them), ranked by counting. The host keeps
// groups × k within CAP.
// variants: topk:MODE=0 topk_merge:MODE=1
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KMAX = 64;
#define CAP 1024u
#define MAXSG 64u // subgroups per workgroup, at most

// A record: count, overflow, max, Z, Σx·e^x, padding, KMAX ids, KMAX
// logits (head.go's headWords words).
#define REC (8u + 2u * KMAX)

#if MODE == 0
layout(binding = 0) uniform usamplerBuffer L; // logits, f32 bits, one per texel
#else
layout(std430, binding = 0) readonly buffer Parts { uint part[]; }; // the groups' records
#endif
layout(std430, binding = 1) writeonly buffer Out { uint o[]; }; // records, one per workgroup
layout(push_constant) uniform Push {
	uint n;   // MODE 0: vocabulary; MODE 1: records to merge
	uint k;   // wanted, <= KMAX
	uint per; // MODE 0: logits per workgroup
} p;

shared float red0[MAXSG];
shared float red1[MAXSG];
shared uint hist[256];
shared uint pick[2]; // bucket, count of keys in the buckets above it
shared uint ncand;
shared uint ckey[CAP];
shared uint cid[CAP];

// key orders floats as unsigned integers: larger float, larger key.
uint key(float f) {
	uint b = floatBitsToUint(f);
	return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

// unkey is key's inverse.
float unkey(uint kk) { return uintBitsToFloat((kk & 0x80000000u) != 0u ? kk & 0x7FFFFFFFu : ~kk); }

#if MODE == 0
// NaN ranks below everything, as the sampler treats it as -Inf.
float logit(uint i) {
	float l = uintBitsToFloat(texelFetch(L, int(i)).x);
	return isnan(l) ? uintBitsToFloat(0xFF800000u) : l;
}
#endif

// sum_wg reduces two values over the workgroup; every invocation gets the totals.
void sum_wg(inout float a, inout float b) {
	a = subgroupAdd(a);
	b = subgroupAdd(b);
	if (subgroupElect()) {
		red0[gl_SubgroupID] = a;
		red1[gl_SubgroupID] = b;
	}
	barrier();
	a = 0.0;
	b = 0.0;
	for (uint s = 0; s < gl_NumSubgroups; s++) {
		a += red0[s];
		b += red1[s];
	}
	barrier();
}

// choose finds, from the top bucket down, the one where the count of keys
// above it reaches k; pick = {bucket, keys in buckets above}.
void choose(uint above) {
	if (gl_LocalInvocationID.x == 0u) {
		uint b = 255u, cum = above;
		for (;; b--) {
			if (cum + hist[b] >= p.k || b == 0u) {
				break;
			}
			cum += hist[b];
		}
		pick[0] = b;
		pick[1] = cum;
	}
	barrier();
}

// rank writes candidate j's place among the nc gathered ones (key
// descending, then id ascending) into record rec when it is among the k.
void rank(uint nc, uint rec) {
	for (uint j = gl_LocalInvocationID.x; j < nc; j += gl_WorkGroupSize.x) {
		uint kj = ckey[j], ij = cid[j];
		uint r = 0u;
		for (uint c = 0; c < nc; c++) {
			uint kc = ckey[c];
			r += (kc > kj || (kc == kj && cid[c] < ij)) ? 1u : 0u;
		}
		if (r < p.k) {
			o[rec + 8u + r] = ij;
			o[rec + 8u + KMAX + r] = floatBitsToUint(unkey(kj));
		}
	}
}

// max_wg is the workgroup's maximum of m (every invocation gets it).
float max_wg(float m) {
	m = subgroupMax(m);
	if (subgroupElect()) {
		red0[gl_SubgroupID] = m;
	}
	barrier();
	m = red0[0];
	for (uint s = 1; s < gl_NumSubgroups; s++) {
		m = max(m, red0[s]);
	}
	barrier();
	return m;
}

#if MODE == 0
void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint wg = gl_WorkGroupSize.x;
	const uint lo = gl_WorkGroupID.x * p.per;
	const uint hi = min(lo + p.per, p.n);
	const uint rec = gl_WorkGroupID.x * REC;

	float m = uintBitsToFloat(0xFF800000u);
	for (uint i = lo + tid; i < hi; i += wg) {
		m = max(m, logit(i));
	}
	for (uint b = tid; b < 256u; b += wg) {
		hist[b] = 0u;
	}
	if (tid == 0u) {
		ncand = 0u;
	}
	m = max_wg(m);

	float z = 0.0, xw = 0.0;
	for (uint i = lo + tid; i < hi; i += wg) {
		float l = logit(i);
		float x = l - m;
		float e = l == m ? 1.0 : exp(x);
		if (e > 0.0) {
			z += e;
			xw += l == m ? 0.0 : x * e;
		}
		atomicAdd(hist[key(l) >> 24], 1u);
	}
	sum_wg(z, xw);
	choose(0u);
	uint b1 = pick[0], above = pick[1];
	barrier();
	for (uint b = tid; b < 256u; b += wg) {
		hist[b] = 0u;
	}
	barrier();
	for (uint i = lo + tid; i < hi; i += wg) {
		uint kk = key(logit(i));
		if ((kk >> 24) == b1) {
			atomicAdd(hist[(kk >> 16) & 0xFFu], 1u);
		}
	}
	barrier();
	choose(above);
	uint floorKey = (b1 << 24) | (pick[0] << 16);

	for (uint i = lo + tid; i < hi; i += wg) {
		uint kk = key(logit(i));
		if (kk >= floorKey) {
			uint c = atomicAdd(ncand, 1u);
			if (c < CAP) {
				ckey[c] = kk;
				cid[c] = i;
			}
		}
	}
	barrier();
	uint nc = min(ncand, CAP);
	rank(nc, rec);
	if (tid == 0u) {
		o[rec] = min(p.k, min(nc, hi > lo ? hi - lo : 0u));
		o[rec + 1u] = ncand > CAP ? 1u : 0u;
		o[rec + 2u] = floatBitsToUint(m);
		o[rec + 3u] = floatBitsToUint(z);
		o[rec + 4u] = floatBitsToUint(xw);
	}
}
#else
void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint wg = gl_WorkGroupSize.x;
	const uint groups = p.n;

	float m = uintBitsToFloat(0xFF800000u);
	for (uint g = tid; g < groups; g += wg) {
		m = max(m, uintBitsToFloat(part[g * REC + 2u]));
	}
	if (tid == 0u) {
		ncand = 0u;
		pick[0] = 0u; // overflow seen
	}
	m = max_wg(m);

	// Each slice's sums are relative to its own max mg:
	// Σ e^(l-m) = e^(mg-m)·Z_g and Σ (l-m)e^(l-m) = e^(mg-m)·(XW_g + (mg-m)·Z_g).
	float z = 0.0, xw = 0.0;
	for (uint g = tid; g < groups; g += wg) {
		uint r = g * REC;
		float mg = uintBitsToFloat(part[r + 2u]);
		float zg = uintBitsToFloat(part[r + 3u]), xg = uintBitsToFloat(part[r + 4u]);
		float e = mg == m ? 1.0 : exp(mg - m);
		if (e > 0.0 && zg > 0.0) {
			z += e * zg;
			xw += e * (xg + (mg == m ? 0.0 : (mg - m) * zg));
		}
		if (part[r + 1u] != 0u) {
			atomicOr(pick[0], 1u);
		}
		uint cnt = part[r];
		for (uint j = 0; j < cnt; j++) {
			uint c = atomicAdd(ncand, 1u);
			if (c < CAP) {
				ckey[c] = key(uintBitsToFloat(part[r + 8u + KMAX + j]));
				cid[c] = part[r + 8u + j];
			}
		}
	}
	sum_wg(z, xw);
	uint nc = min(ncand, CAP);
	rank(nc, 0u);
	if (tid == 0u) {
		o[0] = min(p.k, nc);
		o[1] = (pick[0] != 0u || ncand > CAP) ? 1u : 0u;
		o[2] = floatBitsToUint(m);
		o[3] = floatBitsToUint(z);
		o[4] = floatBitsToUint(xw);
	}
}
#endif
