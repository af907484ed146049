#version 450
// A mixture-of-experts router's decision for each token of the step, from
// its router logits (the router mat-vec's output): the k experts it goes
// to (ids, slot order) and their weights, left on the device for the
// expert mat-vecs (matvec.comp's MOE) and moe_combine.comp. As
// runtime/cpu's route, which follows llama.cpp's build_moe_ffn:
//   GATING 1 (qwen3moe): softmax over all E, the k most probable (ties:
//     the lower id), their probabilities divided by their sum clamped to
//     at least 6.103515625e-5;
//   GATING 2 (gpt-oss): the k largest logits (ties: the lower id), then a
//     softmax over those k;
//   GATING 3 (nemotron_h_moe, arch.Rule): σ of each logit, the k best by
//     σ + the selection bias SB (where biased says there is one), each
//     weighted by its own σ; then, as the push constants say, divided by
//     their sum (clamped as GATING 1's) and × scale. With groups > 1 only
//     the experts of the best used groups are candidates, a group's score
//     the sum of its two best biased σ (DeepSeek-V3's rule, arch.Rule's
//     maskGroups);
//   GATING 4 (deepseek2 with expert_gating_func 1, DeepSeek-V2/V2-Lite):
//     GATING 1's softmax over all E in place of the σ, then GATING 3's
//     steps (bias, groups, renormalisation, scale as the push constants
//     say), as arch.Rule does for GatingSoftmax.
// The softmax is ggml's: exp(x - max) rounded to f32, summed, then scaled
// by the rounded reciprocal of the sum. ggml sums in f64; here a
// compensated f32 sum (TwoSum, `precise` so no compiler reassociates it)
// carries the rounding error along, which is all but that sum's bits,
// without asking the device for f64 (not every GPU has it).
//
// One invocation per token: the work is E exponentials and k scans of E
// values, next to the mat-vecs around it nothing (E 128, k 8 in real
// models), and a serial scan keeps the tie rule and the summation order
// exactly the reference's. The probabilities sit in shared memory (E
// floats, checked against the device limit at recording).
#include "common.glsl"

// constant 0 is the workgroup size by package vulkan's convention (it
// picks the required subgroup size from it); 1 here, one lane per token
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint E = 8;      // experts
layout(constant_id = 2) const uint K = 2;      // experts per token
layout(constant_id = 3) const uint GATING = 1; // 1 softmax → top-k → renormalize, 2 top-k → softmax, 3 sigmoid → biased top-k, 4 softmax → biased top-k

layout(binding = 0) uniform usamplerBuffer L; // router logits, f32 bits, R32_UINT view
layout(std430, binding = 1) writeonly buffer Ids { uint ids[]; };
layout(std430, binding = 2) writeonly buffer Wts { float wts[]; };
layout(std430, binding = 3) readonly buffer Step { uint ntok; uint pos; };
// The step's last token's routing, for the host (backend.RoutingBackend):
// K ids then K weights' bits at logoff, one slot per layer.
layout(std430, binding = 4) writeonly buffer Log { uint routelog[]; };
layout(binding = 5) uniform usamplerBuffer SB; // GATING 3's and 4's selection bias [E], f32 bits (read only where biased)

layout(push_constant) uniform Push {
	uint lstride; // floats per token in L
	uint logoff;  // this layer's place in Log
	uint norm;    // GATING 3 and 4: divide the weights by their sum
	float scale;  // GATING 3 and 4: then multiply them (0: not)
	uint groups;  // GATING 3 and 4: expert groups (0 or 1: none)
	uint used;    // GATING 3 and 4: the groups kept
	uint biased;  // GATING 3 and 4: SB holds a selection bias (else none is added)
} p;

// GATING 3 and 4 choose by a score apart from the weight
const bool SCORED = GATING == 3 || GATING == 4;

shared float v[E];
shared float sc[E]; // what GATING 3's and 4's top-k compares: the biased σ or probability

// rcp_pair is 1/(s + c) rounded once, as ggml's float32 of a double
// reciprocal: the f32 reciprocal of the rounded sum, then Newton's step
// on the pair's remainder.
float rcp_pair(float s, float c) {
	vec2 h = two_sum(s, c);
	precise float q = 1.0 / h.x;
	vec2 pr = two_prod(q, h.x);
	precise float r = ((1.0 - pr.x) - pr.y) - q * h.y;
	precise float res = q + q * r;
	return res;
}

// s + c += x, exactly while c holds the error (Knuth's TwoSum; opaque:
// Mesa cancels (s + x) - s even in precise code, common.glsl).
void add2(inout float s, inout float c, float x) {
	precise float t = opaque(s + x);
	precise float bp = opaque(t - s);
	precise float err = (s - (t - bp)) + (x - bp);
	s = t;
	c += err;
}

// mask_groups sets the biased σ of all but the used best groups to -inf:
// the best by the sum of a group's two best (ties: the lower index, as
// the top-k below).
void mask_groups() {
	uint per = E / p.groups;
	float gs[E];
	for (uint g = 0; g < p.groups; g++) {
		uint a = 0, b = 1;
		float av = sc[g * per], bv = sc[g * per + 1];
		if (bv > av) {
			a = 1; b = 0;
			float x = av; av = bv; bv = x;
		}
		for (uint i = 2; i < per; i++) {
			float x = sc[g * per + i];
			if (x > av) {
				bv = av; av = x;
			} else if (x > bv) {
				bv = x;
			}
		}
		gs[g] = av + bv;
	}
	bool keep[E];
	for (uint g = 0; g < p.groups; g++) {
		keep[g] = false;
	}
	for (uint j = 0; j < p.used; j++) {
		uint best = p.groups;
		for (uint g = 0; g < p.groups; g++) {
			if (!keep[g] && (best == p.groups || gs[g] > gs[best])) {
				best = g;
			}
		}
		keep[min(best, p.groups - 1)] = true;
	}
	for (uint g = 0; g < p.groups; g++) {
		if (!keep[g]) {
			for (uint i = g * per; i < (g + 1) * per; i++) {
				sc[i] = uintBitsToFloat(0xFF800000u);
			}
		}
	}
}

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	uint base = t * p.lstride;
	float mx = uintBitsToFloat(0xFF800000u); // -inf
	for (uint i = 0; i < E; i++) {
		v[i] = uintBitsToFloat(texelFetch(L, int(base + i)).x);
		mx = max(mx, v[i]);
	}
	if (GATING == 3) {
		for (uint i = 0; i < E; i++) {
			// ggml_vec_sigmoid_f32, 1/(1 + expf(-x)), as the CPU
			// backend's: e^-x its float64 exp rounded once (exp_exact;
			// infinite past f32's range, where exp_exact would clamp),
			// the sum and the reciprocal each rounded to f32
			float e = -v[i] >= 88.72283935546875 ? 1.0 / 0.0 : exp_exact(-v[i]);
			precise float d = 1.0 + e;
			precise float sg = 1.0 / d;
			v[i] = sg;
		}
	}
	if (GATING == 1 || GATING == 4) {
		float s = 0.0, c = 0.0;
		for (uint i = 0; i < E; i++) {
			v[i] = exp_exact(v[i] - mx);
			add2(s, c, v[i]);
		}
		float inv = rcp_pair(s, c);
		for (uint i = 0; i < E; i++) {
			v[i] *= inv;
		}
	}
	if (SCORED) {
		for (uint i = 0; i < E; i++) {
			sc[i] = p.biased != 0 ? v[i] + uintBitsToFloat(texelFetch(SB, int(i)).x) : v[i];
		}
		if (p.groups > 1) {
			mask_groups();
		}
	}
	// Top-k, largest first, ties to the lower id: pick j is the largest
	// value ordered after pick j-1 (smaller, or equal with a higher id), so
	// no per-expert "taken" marks are needed.
	uint sel[K];
	float w[K];
	float pv = 0.0;
	uint pid = 0;
	for (uint j = 0; j < K; j++) {
		uint best = E;
		float bv = 0.0;
		for (uint i = 0; i < E; i++) {
			float x = SCORED ? sc[i] : v[i];
			bool after = j == 0 || x < pv || (x == pv && i > pid);
			if (after && (best == E || x > bv)) {
				best = i;
				bv = x;
			}
		}
		best = min(best, E - 1); // NaN logits: a valid id all the same
		sel[j] = best;
		w[j] = v[best];
		pv = SCORED ? sc[best] : v[best];
		pid = best;
	}
	if (GATING == 1 || (SCORED && p.norm != 0)) {
		float s = 0.0, c = 0.0;
		for (uint j = 0; j < K; j++) {
			add2(s, c, w[j]);
		}
		float d = max(s + c, 6.103515625e-5);
		for (uint j = 0; j < K; j++) {
			w[j] /= d;
		}
	}
	if (SCORED) {
		if (p.scale != 0.0) {
			for (uint j = 0; j < K; j++) {
				w[j] *= p.scale;
			}
		}
	} else if (GATING == 2) {
		float s = 0.0, c = 0.0, mk = w[0]; // the largest
		for (uint j = 0; j < K; j++) {
			w[j] = exp_exact(w[j] - mk);
			add2(s, c, w[j]);
		}
		float inv = rcp_pair(s, c);
		for (uint j = 0; j < K; j++) {
			w[j] *= inv;
		}
	}
	for (uint j = 0; j < K; j++) {
		ids[t * K + j] = sel[j];
		wts[t * K + j] = w[j];
		if (t == ntok - 1) {
			routelog[p.logoff + j] = sel[j];
			routelog[p.logoff + K + j] = floatBitsToUint(w[j]);
		}
	}
}
