//go:build cgo && amd64

// Activations, bit-identical to runtime/cpu's portable ones.
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <stdint.h>
#include "simd.h"
#include "exp4.h"

// vk_swiglu sets gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 +
// (float)exp4(-x)), for i < n (any n: the tail runs through a padded
// vector).
void vk_swiglu(float *gate, const float *up, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 x = _mm256_loadu_ps(gate + i);
		const __m256 e = expf8(_mm256_sub_ps(_mm256_setzero_ps(), x));
		const __m256 s = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
		_mm256_storeu_ps(gate + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
	}
	if (i < n) {
		float xb[8] = {0}, ub[8] = {0};
		for (int64_t k = i; k < n; k++) xb[k - i] = gate[k], ub[k - i] = up[k];
		vk_swiglu(xb, ub, 8);
		for (int64_t k = i; k < n; k++) gate[k] = xb[k - i];
	}
}
