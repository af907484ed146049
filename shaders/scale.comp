#version 450
// x[t] ×= s for the step's tokens (gemma4's layer_output_scale, which
// multiplies the whole residual stream after its layer).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Step { uint ntok; uint pos; };

layout(push_constant) uniform Push {
	uint n;      // elements per token
	uint stride; // floats per token
	float s;
} p;

void main() {
	uint t = gl_WorkGroupID.x;
	if (t >= ntok) {
		return;
	}
	for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
		x[t * p.stride + i] *= p.s;
	}
}
