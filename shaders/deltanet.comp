#version 450
// Gated DeltaNet (qwen35) and its neighbours' gates, for the step's tokens
// in order (the recurrence runs token by token inside one dispatch, as
// ggml's fused gated_delta_net does on the CPU):
//   dn_conv    per channel: y = silu(Σ taps · [state ‖ x]), the state shifted
//   dn_delta   per value head: l2-normed q, k of key head h mod H_k; decay
//              e^g, δ = β(v − Sᵀk), S += k⊗δ, o = Sᵀq/√S; then the gated
//              RMS norm rms(o)·w·silu(z)
//   dn_gate    attention output × σ(gate), element by element
//   dn_shared  x += y · σ(s[t]), a per-token gate (the shared expert)
// The state buffers persist between steps: they are the recurrent state.
// Storage buffers throughout: these kernels move little data.
// variants: dn_conv:CONV dn_delta:DELTA dn_gate:GATE dn_shared:SHARED
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Step { uint ntok; uint pos; };

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

#if defined(CONV)
const uint KMAX = 8; // taps (checked at load)
layout(std430, binding = 1) readonly buffer In { float qkv[]; }; // [t][stride]
layout(std430, binding = 2) readonly buffer W { float w[]; };    // [channel][K]
layout(std430, binding = 3) buffer St { float st[]; };           // [K-1][channel], oldest first
layout(std430, binding = 4) writeonly buffer Out { float y[]; }; // [t][stride]
layout(push_constant) uniform Push {
	uint C;      // channels
	uint K;      // taps
	uint stride; // floats per token in In and Out
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
	for (uint t = 0; t < ntok; t++) {
		float x = qkv[t * p.stride + c];
		float s = 0.0;
		for (uint i = 0; i + 1 < p.K; i++) {
			s = fma(win[i], w[c * p.K + i], s);
		}
		s = fma(x, w[c * p.K + p.K - 1], s);
		y[t * p.stride + c] = silu(s);
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

#if defined(DELTA)
layout(constant_id = 1) const uint S = 128; // state size = workgroup size
layout(std430, binding = 1) readonly buffer Conv { float cv[]; };  // conv output [t][cstride]: q | k | v
layout(std430, binding = 2) readonly buffer Beta { float bt[]; };  // [t][bstride]
layout(std430, binding = 3) readonly buffer Alpha { float al[]; }; // [t][bstride]
layout(std430, binding = 4) readonly buffer Z { float z[]; };      // [t][zstride]
layout(std430, binding = 5) readonly buffer P { float prm[]; };    // dt_bias [Hv], ssm_a [Hv], ssm_norm [S]
layout(std430, binding = 6) buffer M { float m[]; };               // [Hv][S][S], row j = value dim j
layout(std430, binding = 7) writeonly buffer O { float o[]; };     // [t][ostride]
layout(push_constant) uniform Push {
	uint hk, hv;
	uint cstride, bstride, zstride, ostride;
	float eps;
	float scale; // 1/√S
} p;

shared float sq[S];
shared float sk[S];
shared float so[S];

void main() {
	uint h = gl_WorkGroupID.x;
	uint j = gl_LocalInvocationID.x;
	uint kh = h % p.hk;
	float row[S];
	uint base = (h * S + j) * S;
	for (uint i = 0; i < S; i++) {
		row[i] = m[base + i];
	}
	float dt = prm[h];
	float a = prm[p.hv + h];
	float nw = prm[2 * p.hv + j];
	for (uint t = 0; t < ntok; t++) {
		uint cb = t * p.cstride;
		sq[j] = cv[cb + kh * S + j];
		sk[j] = cv[cb + p.hk * S + kh * S + j];
		float v = cv[cb + 2 * p.hk * S + h * S + j];
		barrier();
		float qq = 0.0, kk = 0.0;
		for (uint i = 0; i < S; i++) {
			qq += sq[i] * sq[i];
			kk += sk[i] * sk[i];
		}
		float qs = 1.0 / max(sqrt(qq), p.eps);
		float ks = 1.0 / max(sqrt(kk), p.eps);
		float beta = sigmoid(bt[t * p.bstride + h]);
		float x = al[t * p.bstride + h] + dt;
		float g = (x > 20.0 ? x : log(1.0 + exp(x))) * a;
		float decay = exp(g);
		float sk_dot = 0.0;
		for (uint i = 0; i < S; i++) {
			row[i] *= decay;
			sk_dot += row[i] * (sk[i] * ks);
		}
		float delta = (v - sk_dot) * beta;
		float out_j = 0.0;
		for (uint i = 0; i < S; i++) {
			row[i] = fma(sk[i] * ks, delta, row[i]);
			out_j += row[i] * (sq[i] * qs);
		}
		out_j *= p.scale;
		so[j] = out_j;
		barrier();
		float ss = 0.0;
		for (uint i = 0; i < S; i++) {
			ss += so[i] * so[i];
		}
		float r = 1.0 / sqrt(ss / float(S) + p.eps);
		float zz = z[t * p.zstride + h * S + j];
		o[t * p.ostride + h * S + j] = ((out_j * r) * nw) * silu(zz);
		barrier(); // the next token overwrites sq, sk and so
	}
	for (uint i = 0; i < S; i++) {
		m[base + i] = row[i];
	}
}
#endif

#if defined(GATE)
layout(std430, binding = 1) buffer A { float att[]; };      // [t][stride], in place
layout(std430, binding = 2) readonly buffer G { float g[]; }; // [t][stride]
layout(push_constant) uniform Push {
	uint n;
	uint stride;
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	uint t = gl_WorkGroupID.y;
	if (i >= p.n || t >= ntok) {
		return;
	}
	uint at = t * p.stride + i;
	att[at] *= sigmoid(g[at]);
}
#endif

#if defined(SHARED)
layout(std430, binding = 1) buffer X { float x[]; };          // [t][xstride], += in place
layout(std430, binding = 2) readonly buffer Y { float y[]; }; // [t][xstride]
layout(std430, binding = 3) readonly buffer L { float s[]; }; // [t][sstride]: the gate's logit at 0
layout(push_constant) uniform Push {
	uint n;
	uint xstride;
	uint sstride;
} p;

void main() {
	uint i = gl_GlobalInvocationID.x;
	uint t = gl_WorkGroupID.y;
	if (i >= p.n || t >= ntok) {
		return;
	}
	x[t * p.xstride + i] += y[t * p.xstride + i] * sigmoid(s[t * p.sstride]);
}
#endif
