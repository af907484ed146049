//go:build cgo && amd64

// The Mamba2 scan (ggml_ssm_scan's Mamba-2 branch), bit-identical to
// runtime/cpu's portable scanRow: the same fused steps (FMA instructions
// where scanRow's fma32 rounds once), lanes and reduction.
#pragma GCC target("avx2,fma")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include "simd.h"

// vk_ssm_scan_head scans one head's P rows of N states for one token: per
// row p, with xdt = x[p]*dt, s[i] = fma(s[i], dA, B[i]*xdt) and y[p] the
// dot of the new s with C — the first N rounded down to 32 in four
// accumulators of eight lanes (fused), reduced ((a0+a2)+(a1+a3)), then
// lanes l[k]+l[k+4] and ((0+1)+(2+3)), then the rest one by one.
void vk_ssm_scan_head(float *state, const float *x, const float *B, const float *C, float *y, int64_t P, int64_t N,
		      float dA, float dt) {
	const __m256 vdA = _mm256_set1_ps(dA);
	const int64_t np = N & ~(int64_t)31;
	for (int64_t p = 0; p < P; p++) {
		float *s = state + p * N;
		const float xdt = x[p] * dt;
		const __m256 vx = _mm256_set1_ps(xdt);
		float sum = 0.0f;
		if (np > 0) {
			__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
			for (int64_t i = 0; i < np; i += 32) {
				for (int j = 0; j < 4; j++) {
					const int64_t q = i + 8 * j;
					const __m256 v = _mm256_fmadd_ps(_mm256_loadu_ps(s + q), vdA,
									 _mm256_mul_ps(_mm256_loadu_ps(B + q), vx));
					acc[j] = _mm256_fmadd_ps(v, _mm256_loadu_ps(C + q), acc[j]);
					_mm256_storeu_ps(s + q, v);
				}
			}
			const __m256 v = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
			float l[8];
			_mm256_storeu_ps(l, v);
			float a[4];
			for (int k = 0; k < 4; k++) a[k] = l[k] + l[k + 4];
			sum = (a[0] + a[1]) + (a[2] + a[3]);
		}
		for (int64_t q = np; q < N; q++) {
			const float v = fmaf(s[q], dA, B[q] * xdt);
			sum = fmaf(v, C[q], sum);
			s[q] = v;
		}
		y[p] = sum;
	}
}

// vk_causal_conv is one token of a depthwise causal conv over C channels
// with K taps stored tap-major (wt[i*C + c]): out[c] = fma(in[c],
// wt[K-1][c], sum), sum folding fma(state[i][c], wt[i][c], sum) from 0
// over the K-1 older inputs (state[i*C + c], oldest first) — runtime/cpu's
// causalConv, whose fma32 rounds once as these FMA instructions do.
void vk_causal_conv(float *out, const float *state, const float *in, const float *wt, int64_t C, int64_t K) {
	int64_t c = 0;
	for (; c + 8 <= C; c += 8) {
		__m256 sum = _mm256_setzero_ps();
		for (int64_t i = 0; i < K - 1; i++)
			sum = _mm256_fmadd_ps(_mm256_loadu_ps(state + i * C + c), _mm256_loadu_ps(wt + i * C + c), sum);
		_mm256_storeu_ps(out + c, _mm256_fmadd_ps(_mm256_loadu_ps(in + c), _mm256_loadu_ps(wt + (K - 1) * C + c), sum));
	}
	for (; c < C; c++) {
		float sum = 0;
		for (int64_t i = 0; i < K - 1; i++) sum = fmaf(state[i * C + c], wt[i * C + c], sum);
		out[c] = fmaf(in[c], wt[(K - 1) * C + c], sum);
	}
}
