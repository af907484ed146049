#version 450
// common.glsl's fma_exact on given triples, for its test (TestFMAExact):
// invocation i writes the scalar form's a·b + c of triple i and the vec4
// form's lane i % 4, its four lanes holding triples i - i % 4 ... + 3 (so
// every lane of the vec4 form is checked).
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { vec4 abc[]; }; // a, b, c, unused
layout(std430, binding = 1) writeonly buffer Out { vec2 r[]; };  // scalar, vec4 lane

layout(push_constant) uniform Push {
	uint n; // triples, a multiple of 4
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= p.n) {
		return;
	}
	uint b = i - i % 4;
	vec4 a4 = vec4(abc[b].x, abc[b + 1].x, abc[b + 2].x, abc[b + 3].x);
	vec4 b4 = vec4(abc[b].y, abc[b + 1].y, abc[b + 2].y, abc[b + 3].y);
	vec4 c4 = vec4(abc[b].z, abc[b + 1].z, abc[b + 2].z, abc[b + 3].z);
	vec4 v = fma_exact(a4, b4, c4);
	r[i] = vec2(fma_exact(abc[i].x, abc[i].y, abc[i].z), v[i % 4]);
}
