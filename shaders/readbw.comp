#version 450
// Streams a buffer and XOR-reduces it: the read bandwidth a kernel can reach
// on this device, the bound `vkchat bench --profile` reports the mat-vec
// kernels against. Two access paths, because on llvmpipe they differ by an
// order of magnitude: storage-buffer loads (readbw_ssbo) and texel fetches
// (readbw_texel, what the kernels use). Lane l of a workgroup reads uvec4
// l, l+WG, ... of the workgroup's PER_GROUP.
// variants: readbw_ssbo:MODE=0 readbw_texel:MODE=1
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PER_GROUP = 4096; // uvec4 per workgroup

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(binding = 1) uniform usamplerBuffer tsrc;
layout(std430, binding = 2) writeonly buffer Dst { uvec4 dst[]; };

void main() {
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	uint base = g * PER_GROUP;
	uvec4 acc = uvec4(0);
	for (uint i = gl_LocalInvocationID.x; i < PER_GROUP; i += gl_WorkGroupSize.x) {
#if MODE == 0
		acc ^= src[base + i];
#else
		acc ^= texelFetch(tsrc, int(base + i));
#endif
	}
	dst[g * gl_WorkGroupSize.x + gl_LocalInvocationID.x] = acc;
}
