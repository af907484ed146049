#version 450
// Mamba2 layers (nemotron_h, granitehybrid; runtime/arch/mamba2.go) for the
// step's tokens in order: each recurrence runs token by token inside one
// dispatch, as ggml's ssm_conv and ssm_scan fold a batch into the state.
//   ssm_conv   per channel of xBC: y = silu(Σ taps · [state ‖ x] + bias),
//              the state (the last K−1 inputs) shifted
//   ssm_scan   per head, one invocation per row p of its P: δ =
//              softplus(dt + dt_bias), S_p = e^(δ·A)·S_p + δ·x_p·B_g,
//              y_p = S_p·C_g + D·x_p (group g of the head's B and C)
//   ssm_norm   per token and group: y ⊙ silu(z), RMS-normed over the
//              group's channels × ssm_norm, in place
//   relu2      ReLU² of an FFN's up product, in place (the ungated FFN,
//              experts and shared expert of the Nemotron-H layers)
// The state buffers persist between steps: they are the recurrent state.
// Storage buffers throughout: these kernels move little data but the
// state, which stays in registers for the whole step.
// variants: ssm_conv:CONV ssm_scan:SCAN ssm_norm:NORM relu2:RELU2
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Step { uint ntok; uint pos; };

#if defined(CONV)
const uint KMAX = 8; // taps (checked when the plan is compiled)
layout(std430, binding = 1) readonly buffer In { float proj[]; }; // in-proj output [t][pstride]: z | xBC | dt
layout(std430, binding = 2) readonly buffer W { float w[]; };     // [channel][K]
layout(std430, binding = 3) readonly buffer P { float prm[]; };   // the conv bias at boff [C]
layout(std430, binding = 4) buffer St { float st[]; };            // [K-1][channel], oldest first
layout(std430, binding = 5) writeonly buffer Out { float y[]; };  // [t][cstride]
layout(push_constant) uniform Push {
	uint C;       // channels
	uint K;       // taps
	uint pstride; // floats per token in In
	uint xoff;    // xBC's offset in a token's row of In
	uint cstride; // floats per token in Out
	uint boff;    // the bias's offset in P
} p;

void main() {
	uint c = gl_GlobalInvocationID.x;
	if (c >= p.C) {
		return;
	}
	float win[KMAX];
	for (uint i = 0; i + 1 < p.K; i++) {
		win[i] = st[i * p.C + c];
	}
	float bias = prm[p.boff + c];
	for (uint t = 0; t < ntok; t++) {
		float x = proj[t * p.pstride + p.xoff + c];
		float s = 0.0;
		for (uint i = 0; i + 1 < p.K; i++) {
			s = fma(win[i], w[c * p.K + i], s);
		}
		s = fma(x, w[c * p.K + p.K - 1], s);
		y[t * p.cstride + c] = silu(s + bias);
		for (uint i = 0; i + 2 < p.K; i++) {
			win[i] = win[i + 1];
		}
		win[p.K - 2] = x;
	}
	for (uint i = 0; i + 1 < p.K; i++) {
		st[i * p.C + c] = win[i];
	}
}
#endif

#if defined(SCAN)
layout(constant_id = 1) const uint N = 128; // state size
layout(std430, binding = 1) readonly buffer In { float proj[]; }; // in-proj output [t][pstride]: dt at dtoff
layout(std430, binding = 2) readonly buffer X { float xbc[]; };   // conv output [t][cstride]: x | B | C
layout(std430, binding = 3) readonly buffer P { float prm[]; };   // dt_bias [H], A [H], D [H]
layout(std430, binding = 4) buffer M { float m[]; };              // [H][P][N]
layout(std430, binding = 5) writeonly buffer Y { float y[]; };    // [t][ystride]
layout(push_constant) uniform Push {
	uint H;         // heads
	uint perGroup;  // heads per B/C group
	uint inner;     // H·P: B's offset in a row of X
	uint groups;    // G
	uint pstride;   // floats per token in In
	uint dtoff;     // dt's offset in a row of In
	uint cstride;   // floats per token in X
	uint ystride;   // floats per token in Y
} p;

shared float sB[N];
shared float sC[N];

void main() {
	uint h = gl_WorkGroupID.x;
	uint r = gl_LocalInvocationID.x;
	uint P = gl_WorkGroupSize.x;
	uint g = h / p.perGroup; // consecutive heads share a group
	uint base = (h * P + r) * N;
	float row[N];
	for (uint i = 0; i < N; i++) {
		row[i] = m[base + i];
	}
	float dtb = prm[h], A = prm[p.H + h], D = prm[2 * p.H + h];
	uint boff = p.inner + g * N, coff = p.inner + p.groups * N + g * N;
	for (uint t = 0; t < ntok; t++) {
		uint xb = t * p.cstride;
		for (uint i = r; i < N; i += P) {
			sB[i] = xbc[xb + boff + i];
			sC[i] = xbc[xb + coff + i];
		}
		barrier();
		float d = proj[t * p.pstride + p.dtoff + h] + dtb;
		float dt = d > 20.0 ? d : log(1.0 + exp(d)); // ggml_softplus
		float dA = exp(dt * A);
		float x = xbc[xb + h * P + r];
		float xdt = x * dt;
		float sum = 0.0;
		for (uint i = 0; i < N; i++) {
			float v = fma(row[i], dA, sB[i] * xdt);
			sum = fma(v, sC[i], sum);
			row[i] = v;
		}
		y[t * p.ystride + h * P + r] = sum + x * D;
		barrier(); // the next token overwrites sB and sC
	}
	for (uint i = 0; i < N; i++) {
		m[base + i] = row[i];
	}
}
#endif

#if defined(NORM)
layout(std430, binding = 1) readonly buffer In { float proj[]; }; // in-proj output [t][pstride]: z first
layout(std430, binding = 2) readonly buffer P { float prm[]; };   // ssm_norm [inner] at noff
layout(std430, binding = 3) buffer Y { float y[]; };              // [t][ystride], in place
layout(push_constant) uniform Push {
	uint width;   // channels per group
	uint pstride; // floats per token in In
	uint ystride; // floats per token in Y
	uint noff;    // ssm_norm's offset in P
	float eps;
} p;

shared float part[gl_WorkGroupSize.x];

void main() {
	uint g = gl_WorkGroupID.x;
	uint t = gl_WorkGroupID.y;
	if (t >= ntok) {
		return;
	}
	uint lid = gl_LocalInvocationID.x;
	uint WG = gl_WorkGroupSize.x;
	uint yb = t * p.ystride + g * p.width, zb = t * p.pstride + g * p.width;
	float ss = 0.0;
	for (uint i = lid; i < p.width; i += WG) {
		float v = y[yb + i] * silu(proj[zb + i]);
		y[yb + i] = v;
		ss = fma(v, v, ss);
	}
	part[lid] = ss;
	barrier();
	for (uint s = WG / 2; s > 0; s >>= 1) {
		if (lid < s) {
			part[lid] += part[lid + s];
		}
		barrier();
	}
	float scale = 1.0 / sqrt(part[0] / float(p.width) + p.eps);
	for (uint i = lid; i < p.width; i += WG) {
		y[yb + i] = (y[yb + i] * scale) * prm[p.noff + g * p.width + i];
	}
}
#endif

#if defined(RELU2)
layout(std430, binding = 1) buffer H { float h[]; }; // [row][stride], in place
layout(push_constant) uniform Push {
	uint n;
	uint stride;
	uint per; // rows per token: 1, or the experts per token
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	uint t = gl_WorkGroupID.y;
	if (i >= p.n || t >= ntok * p.per) {
		return;
	}
	float v = max(h[t * p.stride + i], 0.0);
	h[t * p.stride + i] = v * v;
}
#endif
