// e^x in float64 on four lanes, shared by act.c and attn.c.
#include <immintrin.h>

// exp4 is runtime/cpu's exp64 on four lanes, operation for operation: x
// clamped to [-110, 90], k = x·log2e rounded to even, r = (x - k·ln2hi) -
// k·ln2lo, Horner over the Taylor terms to r^12/12!, then ·2^k through the
// exponent bits. No FMA anywhere (fp-contract off): Go rounds each product.
static inline __m256d exp4(__m256d x) {
	static const double c[13] = {1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
				     1.0 / 5040,      1.0 / 720,      1.0 / 120,     1.0 / 24,     1.0 / 6,
				     0.5,             1,              1};
	x = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(-110)), _mm256_set1_pd(90));
	const __m256d k = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
					  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	const __m256d r = _mm256_sub_pd(_mm256_sub_pd(x, _mm256_mul_pd(k, _mm256_set1_pd(0x1.62e42fefa3800p-1))),
					_mm256_mul_pd(k, _mm256_set1_pd(0x1.ef35793c76730p-45)));
	__m256d p = _mm256_set1_pd(c[0]);
	for (int i = 1; i < 13; i++) p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(c[i]));
	const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
	const __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1023)), 52));
	return _mm256_mul_pd(p, s);
}

// expf8 is (float)exp4 of eight floats.
static inline __m256 expf8(__m256 x) {
	const __m128 lo = _mm256_cvtpd_ps(exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(x))));
	const __m128 hi = _mm256_cvtpd_ps(exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
	return _mm256_set_m128(hi, lo);
}
