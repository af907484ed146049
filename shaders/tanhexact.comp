#version 450
// common.glsl's tanh_exact on given values, for its test (TestTanhExact);
// with DEVICE the device's tanh instead, to show the test tells them apart.
// variants: tanhexact tanhdevice:DEVICE
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Push {
	uint n;
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= p.n) {
		return;
	}
#ifdef DEVICE
	y[i] = tanh(x[i]);
#else
	y[i] = tanh_exact(x[i]);
#endif
}
