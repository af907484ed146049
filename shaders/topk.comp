#version 450
// The head of the next-token distribution, on the device: the largest
// logit, the softmax normalizer Z = Σ exp(l - max) and Σ (l - max)·exp(l - max)
// (for the entropy) over the whole vocabulary, and the k best tokens in
// order (ties by lower id), so that a decode step reads back k entries
// instead of the vocabulary. One workgroup:
//  1. max, then Z and the first histogram (top 8 bits of an order-keeping
//     key of each logit), both reduced through subgroups and shared memory;
//  2. the bucket holding the k-th best key, then a histogram of the next 8
//     bits inside it: every token whose key reaches that 16-bit prefix is a
//     candidate (k plus the few sharing the k-th's prefix);
//  3. candidates gathered into shared memory and ranked by counting.
// More than CAP candidates (a flat distribution) sets overflow, and the
// host reads the whole vocabulary instead.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KMAX = 64;
#define CAP 1024u
#define MAXSG 64u // subgroups per workgroup, at most

layout(binding = 0) uniform usamplerBuffer L; // logits, f32 bits, one per texel
layout(std430, binding = 1) writeonly buffer Out {
	uint count;
	uint overflow;
	float mx;
	float z;
	float xw;
	uint pad[3];
	uint ids[KMAX];
	float vals[KMAX];
} o;
layout(push_constant) uniform Push {
	uint n; // vocabulary
	uint k; // wanted, <= KMAX
} p;

shared float red0[MAXSG];
shared float red1[MAXSG];
shared uint hist[256];
shared uint pick[2]; // bucket, count of keys in the buckets above it
shared uint ncand;
shared uint ckey[CAP];
shared uint cid[CAP];

// NaN ranks below everything, as the sampler treats it as -Inf.
float logit(uint i) {
	float l = uintBitsToFloat(texelFetch(L, int(i)).x);
	return isnan(l) ? uintBitsToFloat(0xFF800000u) : l;
}

// key orders floats as unsigned integers: larger float, larger key.
uint key(float f) {
	uint b = floatBitsToUint(f);
	return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

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

void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint wg = gl_WorkGroupSize.x;

	float m = uintBitsToFloat(0xFF800000u);
	for (uint i = tid; i < p.n; i += wg) {
		m = max(m, logit(i));
	}
	m = subgroupMax(m);
	if (subgroupElect()) {
		red0[gl_SubgroupID] = m;
	}
	for (uint b = tid; b < 256u; b += wg) {
		hist[b] = 0u;
	}
	if (tid == 0u) {
		ncand = 0u;
	}
	barrier();
	m = red0[0];
	for (uint s = 1; s < gl_NumSubgroups; s++) {
		m = max(m, red0[s]);
	}
	barrier();

	float z = 0.0, xw = 0.0;
	for (uint i = tid; i < p.n; i += wg) {
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
	for (uint i = tid; i < p.n; i += wg) {
		uint kk = key(logit(i));
		if ((kk >> 24) == b1) {
			atomicAdd(hist[(kk >> 16) & 0xFFu], 1u);
		}
	}
	barrier();
	choose(above);
	uint floorKey = (b1 << 24) | (pick[0] << 16);

	for (uint i = tid; i < p.n; i += wg) {
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
	for (uint j = tid; j < nc; j += wg) {
		uint kj = ckey[j], ij = cid[j];
		uint r = 0u;
		for (uint c = 0; c < nc; c++) {
			uint kc = ckey[c];
			r += (kc > kj || (kc == kj && cid[c] < ij)) ? 1u : 0u;
		}
		if (r < p.k) {
			o.ids[r] = ij;
			o.vals[r] = logit(ij);
		}
	}
	if (tid == 0u) {
		o.count = min(p.k, min(nc, p.n));
		o.overflow = ncand > CAP ? 1u : 0u;
		o.mx = m;
		o.z = z;
		o.xw = xw;
	}
}
