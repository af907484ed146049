#version 450
// lfm2's short convolution over the step's tokens, one invocation per
// channel: u = b·x, y = Σ_k w[k]·(state ‖ u)[t+k] over the L taps (oldest
// first, no activation), out = c·y, the state keeping the last L-1 values
// of u. The tokens are taken in order since each one's window holds the
// previous ones; channels are independent. The sum is in the order ggml's
// ssm_conv adds.
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform usamplerBuffer BCU; // in_proj output per token: b | c | u, f32 bits
layout(binding = 1) uniform usamplerBuffer W;   // taps [channel][L], f32 bits
layout(std430, binding = 2) buffer State { float st[]; }; // [L-1][channel], oldest first
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) readonly buffer Step { uint ntok; uint pos; };

layout(push_constant) uniform Push {
	uint n;       // channels (embd)
	uint taps;    // L
	uint bstride; // floats per token in BCU
	uint ystride; // floats per token in Y
} p;

void main() {
	uint ch = gl_GlobalInvocationID.x;
	if (ch >= p.n) {
		return;
	}
	uint L = p.taps;
	for (uint t = 0; t < ntok; t++) {
		uint base = t * p.bstride;
		float b = uintBitsToFloat(texelFetch(BCU, int(base + ch)).x);
		float c = uintBitsToFloat(texelFetch(BCU, int(base + p.n + ch)).x);
		float u = uintBitsToFloat(texelFetch(BCU, int(base + 2u * p.n + ch)).x);
		float cur = b * u;
		float sum = 0.0;
		for (uint k = 0; k + 1 < L; k++) {
			sum += st[k * p.n + ch] * uintBitsToFloat(texelFetch(W, int(ch * L + k)).x);
		}
		sum += cur * uintBitsToFloat(texelFetch(W, int(ch * L + L - 1u)).x);
		for (uint k = 0; k + 2 < L; k++) {
			st[k * p.n + ch] = st[(k + 1u) * p.n + ch];
		}
		st[(L - 2u) * p.n + ch] = cur;
		y[t * p.ystride + ch] = c * sum;
	}
}
