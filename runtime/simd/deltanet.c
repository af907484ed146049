//go:build cgo && amd64

// The Gated DeltaNet step, bit-identical to runtime/cpu's portable deltaStep.
#pragma GCC target("avx2")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <stdint.h>
#include "simd.h"

// dot8 is runtime/cpu's dot8: eight float lanes of unfused products and
// sums, added ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail in order.
static float dot8(const float *a, const float *b, int64_t n) {
	__m256 acc = _mm256_setzero_ps();
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
	}
	float l[8];
	_mm256_storeu_ps(l, acc);
	float s = ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]));
	for (; i < n; i++) s += a[i] * b[i];
	return s;
}

// vk_delta_step is one token of the delta rule on one value head's
// transposed S×S state m (row j = column j of S): m *= decay; per row j
// delta = (v[j] - m_j.k)*beta, m_j += k*delta, o[j] = (m_j.q)*scale.
void vk_delta_step(float *m, const float *q, const float *k, const float *v, float *o, int64_t S, float decay,
		   float beta, float scale) {
	const __m256 dv = _mm256_set1_ps(decay);
	int64_t i = 0;
	for (; i + 8 <= S * S; i += 8) _mm256_storeu_ps(m + i, _mm256_mul_ps(_mm256_loadu_ps(m + i), dv));
	for (; i < S * S; i++) m[i] *= decay;
	for (int64_t j = 0; j < S; j++) {
		float *row = m + j * S;
		const float delta = (v[j] - dot8(row, k, S)) * beta;
		const __m256 d = _mm256_set1_ps(delta);
		int64_t c = 0;
		for (; c + 8 <= S; c += 8) {
			_mm256_storeu_ps(row + c, _mm256_add_ps(_mm256_loadu_ps(row + c), _mm256_mul_ps(_mm256_loadu_ps(k + c), d)));
		}
		for (; c < S; c++) row[c] += k[c] * delta;
		o[j] = dot8(row, q, S) * scale;
	}
}
