#version 450
// Rotary embedding of the step's queries and keys, and the key/value cache
// write: per token, q (rotated) goes to Q, k (rotated) and v to the layer's
// caches at position pos+t, head-major [kv head][position][dim]. cos and
// sin come from the step buffer, computed on the host in float64 exactly as
// the reference backend does. One workgroup per token; a lane handles two
// adjacent elements so the F16 cache is written as packed pairs.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint HD = 64;     // head size
layout(constant_id = 2) const uint DIMS = 64;   // rotated dimensions per head
layout(constant_id = 3) const uint NEOX = 0;    // rotate (i, i+DIMS/2) instead of (2i, 2i+1)
layout(constant_id = 4) const uint KVF32 = 0;   // cache element is f32 (else f16)

layout(binding = 0) uniform usamplerBuffer QKV;  // [token][q | k | v], R32_UINT view
layout(binding = 1) uniform usamplerBuffer ROPE; // [token][pair] (cos, sin) bits, R32G32_UINT view
layout(std430, binding = 2) writeonly buffer Q { float q[]; };
// The caches are written as R32_UINT storage texel buffers (an f16 pair or
// an f32 per texel), so their size is bounded by maxTexelBufferElements,
// not by the smaller maxStorageBufferRange.
layout(binding = 3, r32ui) uniform writeonly uimageBuffer KC;
layout(binding = 4, r32ui) uniform writeonly uimageBuffer VC;
layout(std430, binding = 5) readonly buffer Step { uint ntok; uint pos; };

layout(push_constant) uniform Push {
	uint heads;
	uint kvheads;
	uint qkvstride; // floats per token in QKV
	uint qstride;   // floats per token in Q
	uint ctx;       // cache positions
} p;

// rotated value of element d of the head starting at base
float rot(uint base, uint d, uint t) {
	float xd = uintBitsToFloat(texelFetch(QKV, int(base + d)).x);
	if (d >= DIMS) {
		return xd;
	}
	const uint half_ = DIMS / 2;
	uint i = NEOX != 0 ? d % half_ : d / 2;
	bool first = NEOX != 0 ? d < half_ : (d & 1u) == 0;
	uint partner = NEOX != 0 ? (first ? d + half_ : d - half_) : d ^ 1u;
	float xp = uintBitsToFloat(texelFetch(QKV, int(base + partner)).x);
	uvec2 cs = texelFetch(ROPE, int(t * half_ + i)).xy;
	float c = uintBitsToFloat(cs.x), s = uintBitsToFloat(cs.y);
	return first ? xd * c - xp * s : xp * s + xd * c;
}

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	uint at = pos + t;
	uint qw = p.heads * HD, kvw = p.kvheads * HD;
	uint pairs = (qw + 2 * kvw) / 2;
	for (uint e = gl_LocalInvocationID.x; e < pairs; e += gl_WorkGroupSize.x) {
		uint d0 = 2 * e;
		uint base = t * p.qkvstride;
		if (d0 < qw) {
			uint h = d0 / HD, d = d0 % HD;
			q[t * p.qstride + d0] = rot(base + h * HD, d, t);
			q[t * p.qstride + d0 + 1] = rot(base + h * HD, d + 1, t);
			continue;
		}
		bool isK = d0 < qw + kvw;
		uint off = d0 - qw - (isK ? 0 : kvw);
		uint h = off / HD, d = off % HD;
		uint hb = base + qw + (isK ? 0 : kvw) + h * HD;
		float a, b;
		if (isK) {
			a = rot(hb, d, t);
			b = rot(hb, d + 1, t);
		} else {
			a = uintBitsToFloat(texelFetch(QKV, int(hb + d)).x);
			b = uintBitsToFloat(texelFetch(QKV, int(hb + d + 1)).x);
		}
		uint cell = (h * p.ctx + at) * HD + d;
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
