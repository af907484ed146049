#version 450
// The model's last word on the logits, in place, before the device head and
// the read back: × scale (granite's 1/logit_scale), then with CAP the final
// soft-cap as llama.cpp builds it (gemma2/3): cap · tanh(logit · (1/cap)),
// its tanh the CPU backend's tanhf with CAP 2.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CAP = 0; // 1: the device's tanh, 2: the CPU backend's (tanh_exact)

layout(binding = 0) uniform usamplerBuffer YR; // the logits, read (R32_UINT view)
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer Step { uint ntok; uint pos; };

layout(push_constant) uniform Push {
	uint n;      // logits per token (the vocabulary)
	uint last;   // 1: only the batch's last token's logits are there, at 0
	float scale;
	float cap;
	float inv;   // 1/cap, rounded to f32 as llama.cpp's graph does
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	uint t = gl_WorkGroupID.y;
	if (i >= p.n || t >= (p.last != 0 ? 1 : ntok)) {
		return;
	}
	uint o = t * p.n + i;
	float v = uintBitsToFloat(texelFetch(YR, int(o)).x) * p.scale;
	if (CAP != 0) {
		float s = v * p.inv;
		v = p.cap * (CAP == 2 ? tanh_exact(s) : tanh(s));
	}
	y[o] = v;
}
