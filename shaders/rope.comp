#version 450
// Q/K normalization, rotary embedding and the key/value cache write for
// every token of a step, one workgroup per token (rope.glsl). A decode step
// on the GPU layout does the same in its Q|K|V product's last workgroup
// instead (matvec_sg.comp's ROPE), saving this dispatch and its barrier.
#include "common.glsl"

#define ROPE_IN(i) uintBitsToFloat(texelFetch(QKV, int(i)).x)
#define ROPE_CID 1
#define ROPE_BIND 2
#define ROPE_NSCALE (QKNORM == 1 ? MAXG : 2)

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform usamplerBuffer QKV;  // [token][q | k | v], R32_UINT view
layout(std430, binding = 1) readonly buffer Step { uint ntok; uint pos; };

#include "rope.glsl"

layout(push_constant) uniform Push {
	RopeArgs r;
} p;

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	rope_token(p.r, t, t * p.r.qkvstride);
}
