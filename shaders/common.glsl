// Shared by every kernel. The kernels are shaped for what llvmpipe (Mesa's
// CPU Vulkan driver) turns into fast code, measured on our machines:
//  * storage-buffer loads become a scalar loop over the 8 lanes with a
//    branch per component (~0.6 GB/s), even at subgroup-uniform addresses;
//  * texel-buffer fetches (texelFetch on a usamplerBuffer) go through the
//    sampler's AVX2 gather path (~7 GB/s for R32G32B32A32_UINT),
// so every bulk read is a texel fetch and storage buffers are only written.
// On GPUs texel fetches go through the texture cache and are as good.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

// Byte i (0..15) of a 16-byte texel; i is a compile-time constant after
// unrolling, so this folds to one shift and mask.
uint texel_byte(uvec4 v, uint i) { return (v[i >> 2] >> (8u * (i & 3u))) & 0xFFu; }

// Signed byte i of a texel.
int texel_sbyte(uvec4 v, uint i) { return bitfieldExtract(int(v[i >> 2]), int(8u * (i & 3u)), 8); }

float half_lo(uint v) { return unpackHalf2x16(v).x; }
float half_hi(uint v) { return unpackHalf2x16(v).y; }

float silu(float x) { return x / (1.0 + exp(-x)); }
