//go:build cgo && amd64

// F32, F16 and BF16 weights against float activations (already rounded to
// the weight's type by the caller, so every product is exact in float32
// for F16 and BF16). Bit-identical to the portable kernels. F16 and BF16:
// products in float32, summed in four double chains by element index
// modulo 4 (one 4-lane double accumulator), a tail of n%4 into chain 0,
// and (s0+s1)+(s2+s3) rounded to float32. F32: llama.cpp's own orders,
// ggml_vec_dot_f32's (mm_f32) and tinyBLAS's (mm_f32_gemm), with FMA.
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "simd.h"

enum { F32 = 0, F16 = 1, BF16 = 30 };

static inline __m128 load4(int T, const uint8_t *p) {
	if (T == F32) return _mm_loadu_ps((const float *)p);
	__m128i h = _mm_loadl_epi64((const __m128i *)p);
	if (T == F16) return _mm_cvtph_ps(h);
	return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h)); // bf16 << 16
}

static inline float load1(int T, const uint8_t *p) {
	if (T == F32) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	uint16_t h;
	memcpy(&h, p, 2);
	if (T == F16) return _cvtsh_ss(h);
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline __attribute__((always_inline)) void ftile(const int T, const MMArgs *A, int64_t r, int64_t v, const int RT, const int VT) {
	const int es = T == F32 ? 4 : 2;
	const int64_t n = A->n, n4 = n & ~(int64_t)3;
	__m256d acc[8];
	for (int k = 0; k < RT * VT; k++) acc[k] = _mm256_setzero_pd();
	for (int64_t i = 0; i < n4; i += 4) {
		__m128 x[8];
		for (int j = 0; j < VT; j++) x[j] = _mm_loadu_ps(A->f + (v + j) * n + i);
		for (int ri = 0; ri < RT; ri++) {
			const __m128 w = load4(T, A->w + (r + ri) * A->rb + i * es);
			for (int j = 0; j < VT; j++) acc[ri * VT + j] = _mm256_add_pd(acc[ri * VT + j], _mm256_cvtps_pd(_mm_mul_ps(w, x[j])));
		}
	}
	for (int ri = 0; ri < RT; ri++)
		for (int j = 0; j < VT; j++) {
			double s[4];
			_mm256_storeu_pd(s, acc[ri * VT + j]);
			for (int64_t i = n4; i < n; i++) s[0] += (double)(load1(T, A->w + (r + ri) * A->rb + i * es) * A->f[(v + j) * n + i]);
			A->dst[(v + j) * A->ds + r + ri] = (float)((s[0] + s[1]) + (s[2] + s[3]));
		}
}

#define FDRIVER(NAME, T)                                                                                     \
	void mm_##NAME(const MMArgs *A) {                                                                       \
		int64_t v = A->v0;                                                                                  \
		for (; v + 2 <= A->v1; v += 2) {                                                                    \
			int64_t r = A->r0;                                                                          \
			for (; r + 4 <= A->r1; r += 4) ftile(T, A, r, v, 4, 2);                                        \
			for (; r < A->r1; r++) ftile(T, A, r, v, 1, 2);                                                \
		}                                                                                                   \
		for (; v < A->v1; v++) {                                                                            \
			int64_t r = A->r0;                                                                          \
			for (; r + 8 <= A->r1; r += 8) ftile(T, A, r, v, 8, 1);                                        \
			for (; r < A->r1; r++) ftile(T, A, r, v, 1, 1);                                                \
		}                                                                                                   \
	}
FDRIVER(f16, F16)
FDRIVER(bf16, BF16)

// hsum8 is GGML_F32x8_REDUCE's last steps on one accumulator: the halves
// added, then (l0+l4 + l1+l5) + (l2+l6 + l3+l7).
static inline float hsum8(__m256 v) {
	const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	const __m128 t1 = _mm_hadd_ps(t0, t0);
	return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

// vtile is ggml_vec_dot_f32 for RT rows against vector v: blocks of 32 in
// four 8-lane FMA accumulators, accumulators (0+2) + (1+3), hsum8, then
// the n%32 tail fused into the sum one product at a time.
static inline __attribute__((always_inline)) void vtile(const MMArgs *A, int64_t r, int64_t v, const int RT) {
	const int64_t n = A->n, n32 = n & ~(int64_t)31;
	const float *x = A->f + v * n;
	__m256 acc[2][4];
	for (int ri = 0; ri < RT; ri++)
		for (int j = 0; j < 4; j++) acc[ri][j] = _mm256_setzero_ps();
	for (int64_t i = 0; i < n32; i += 32)
		for (int j = 0; j < 4; j++) {
			const __m256 xv = _mm256_loadu_ps(x + i + 8 * j);
			for (int ri = 0; ri < RT; ri++) {
				const float *w = (const float *)(A->w + (r + ri) * A->rb);
				acc[ri][j] = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8 * j), xv, acc[ri][j]);
			}
		}
	for (int ri = 0; ri < RT; ri++) {
		const float *w = (const float *)(A->w + (r + ri) * A->rb);
		__m128 s = _mm_set_ss(hsum8(_mm256_add_ps(_mm256_add_ps(acc[ri][0], acc[ri][2]), _mm256_add_ps(acc[ri][1], acc[ri][3]))));
		for (int64_t i = n32; i < n; i++) s = _mm_fmadd_ss(_mm_set_ss(w[i]), _mm_set_ss(x[i]), s);
		A->dst[v * A->ds + r + ri] = _mm_cvtss_f32(s);
	}
}

void mm_f32(const MMArgs *A) {
	for (int64_t v = A->v0; v < A->v1; v++) {
		int64_t r = A->r0;
		for (; r + 2 <= A->r1; r += 2) vtile(A, r, v, 2);
		for (; r < A->r1; r++) vtile(A, r, v, 1);
	}
}

// gtile is tinyBLAS's F32 kernel (n a multiple of 8) for RT rows and VT
// vectors: one 8-lane FMA accumulator per output over the whole row, then
// hsum, (l0+l4 + l2+l6) + (l1+l5 + l3+l7).
static inline __attribute__((always_inline)) void gtile(const MMArgs *A, int64_t r, int64_t v, const int RT, const int VT) {
	const int64_t n = A->n;
	__m256 acc[8];
	for (int k = 0; k < RT * VT; k++) acc[k] = _mm256_setzero_ps();
	for (int64_t i = 0; i + 8 <= n; i += 8) {
		__m256 x[4];
		for (int j = 0; j < VT; j++) x[j] = _mm256_loadu_ps(A->f + (v + j) * n + i);
		for (int ri = 0; ri < RT; ri++) {
			const __m256 w = _mm256_loadu_ps((const float *)(A->w + (r + ri) * A->rb) + i);
			for (int j = 0; j < VT; j++) acc[ri * VT + j] = _mm256_fmadd_ps(w, x[j], acc[ri * VT + j]);
		}
	}
	for (int ri = 0; ri < RT; ri++)
		for (int j = 0; j < VT; j++) {
			__m128 h = _mm_add_ps(_mm256_extractf128_ps(acc[ri * VT + j], 1), _mm256_castps256_ps128(acc[ri * VT + j]));
			h = _mm_add_ps(h, _mm_movehl_ps(h, h));
			h = _mm_add_ss(h, _mm_movehdup_ps(h));
			A->dst[(v + j) * A->ds + r + ri] = _mm_cvtss_f32(h);
		}
}

void mm_f32_gemm(const MMArgs *A) {
	int64_t v = A->v0;
	for (; v + 4 <= A->v1; v += 4) {
		int64_t r = A->r0;
		for (; r + 2 <= A->r1; r += 2) gtile(A, r, v, 2, 4);
		for (; r < A->r1; r++) gtile(A, r, v, 1, 4);
	}
	for (; v < A->v1; v++) {
		int64_t r = A->r0;
		for (; r + 4 <= A->r1; r += 4) gtile(A, r, v, 4, 1);
		for (; r < A->r1; r++) gtile(A, r, v, 1, 1);
	}
}
