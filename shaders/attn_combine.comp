#version 450
// Merges the split-K partials of attention.comp (SPLIT): per (query head,
// token) the live splits' unnormalized value sums are rescaled to the
// largest max and divided by the rescaled sum of exponentials. Which splits
// are live follows from the step's span as attention.comp cut it
// (attnsplit.glsl); the others were not written this step. Lanes take the
// head's dimensions; each lane recomputes the max and the sum, which is
// a few splits' worth of reads, to need no shared memory or barrier.
// SINK folds the head's sink logit in once, after the merge, as
// attention.comp does without splits.
#include "common.glsl"
#include "attnsplit.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HD = 64; // head size
layout(constant_id = 2) const uint SINK = 0; // 1: a sink logit per head (SINKS)
layout(constant_id = 3) const uint GRAN = 1; // attention.comp's SPLIT

layout(std430, binding = 0) readonly buffer Part { float part[]; }; // [token][head][split][HD+2]
layout(std430, binding = 1) writeonly buffer Out { float o[]; };    // [token][head][dim], qstride floats per token
layout(std430, binding = 2) readonly buffer Step { uint ntok; uint pos; };
layout(std430, binding = 3) readonly buffer Sinks { float sinks[]; }; // [head], with SINK

layout(push_constant) uniform Push {
	uint qstride; // floats per token in Out
	uint splits;  // partials per head (attention.comp's gl_NumWorkGroups.z)
	uint window;  // the layer's sliding window (0: none), as attention.comp's
} p;

void main() {
	uint h = gl_WorkGroupID.x;
	uint t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint pb = (t * gl_NumWorkGroups.x + h) * p.splits * (HD + 2);
	uint at = pos + t;
	uint first = p.window != 0 && at + 1 > p.window ? at + 1 - p.window : 0;
	uint live = attn_live_splits(at + 1 - first, p.splits, GRAN);
	float mx = -1e30;
	for (uint z = 0; z < live; z++) {
		mx = max(mx, part[pb + z * (HD + 2) + HD]);
	}
	float sum = 0.0;
	for (uint z = 0; z < live; z++) {
		uint zb = pb + z * (HD + 2);
		sum += part[zb + HD + 1] * exp(part[zb + HD] - mx);
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
	float inv = ms / sum;
	uint ob = t * p.qstride + h * HD;
	for (uint d = gl_LocalInvocationID.x; d < HD; d += gl_WorkGroupSize.x) {
		float s = 0.0;
		for (uint z = 0; z < live; z++) {
			uint zb = pb + z * (HD + 2);
			s += part[zb + d] * exp(part[zb + HD] - mx);
		}
		o[ob + d] = s * inv;
	}
}
