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

// vk_rms_norm is runtime/cpu's rmsNorm: squares rounded to float, summed in
// float64 in four lanes by index mod 4, (s0+s1)+(s2+s3), the mean rounded
// to float, scale = 1.0f/sqrtf(mean + eps) in float, out = (x*scale)*w (w
// NULL: x*scale).
void vk_rms_norm(float *out, const float *x, const float *w, int64_t n, float eps) {
	__m256d acc = _mm256_setzero_pd();
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) {
		const __m128 v = _mm_loadu_ps(x + i);
		acc = _mm256_add_pd(acc, _mm256_cvtps_pd(_mm_mul_ps(v, v)));
	}
	double s[4];
	_mm256_storeu_pd(s, acc);
	for (; i < n; i++) s[i % 4] += (double)(x[i] * x[i]);
	const double sum = (s[0] + s[1]) + (s[2] + s[3]);
	const float mean = (float)(sum / (double)n);
	// the instruction: IEEE sqrt, as Go's math.Sqrt rounded to float, without libm
	const float scale = 1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps)));
	const __m256 sc = _mm256_set1_ps(scale);
	for (i = 0; i + 8 <= n; i += 8) {
		__m256 o = _mm256_mul_ps(_mm256_loadu_ps(x + i), sc);
		if (w) o = _mm256_mul_ps(o, _mm256_loadu_ps(w + i));
		_mm256_storeu_ps(out + i, o);
	}
	for (; i < n; i++) out[i] = w ? (x[i] * scale) * w[i] : x[i] * scale;
}

// vk_rope rotates n/2 pairs of x: out_a = x_a*c - x_b*s and out_b =
// x_a*s + x_b*c with the first product fused into the sum (one FMA) and the
// second rounded, as GCC contracts ggml's rope; pair i at (2i, 2i+1), or
// (i, i+n/2) when neox; c and s are per pair.
static inline float rope_a(float a, float b, float c, float s) {
	return _mm_cvtss_f32(_mm_fmsub_ss(_mm_set_ss(a), _mm_set_ss(c), _mm_set_ss(b * s)));
}
static inline float rope_b(float a, float b, float c, float s) {
	return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(s), _mm_set_ss(b * c)));
}

void vk_rope(float *x, const float *c, const float *s, int64_t pairs, int neox) {
	int64_t i = 0;
	if (neox) {
		for (; i + 8 <= pairs; i += 8) {
			const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + pairs + i);
			const __m256 cv = _mm256_loadu_ps(c + i), sv = _mm256_loadu_ps(s + i);
			_mm256_storeu_ps(x + i, _mm256_fmsub_ps(a, cv, _mm256_mul_ps(b, sv)));
			_mm256_storeu_ps(x + pairs + i, _mm256_fmadd_ps(a, sv, _mm256_mul_ps(b, cv)));
		}
		for (; i < pairs; i++) {
			const float a = x[i], b = x[pairs + i];
			x[i] = rope_a(a, b, c[i], s[i]);
			x[pairs + i] = rope_b(a, b, c[i], s[i]);
		}
		return;
	}
	for (; i + 4 <= pairs; i += 4) {
		// four pairs: a = even lanes, b = odd lanes
		const __m256 v = _mm256_loadu_ps(x + 2 * i);
		const __m128 c4 = _mm_loadu_ps(c + i), s4 = _mm_loadu_ps(s + i);
		const __m256 cd = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
		const __m256 sd = _mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4));
		const __m256 sw = _mm256_permute_ps(v, 0xB1); // (b, a) per pair
		// fused factors (a, a) and (c, s), rounded terms (b*s, b*c):
		// even lanes a*c - b*s, odd lanes a*s + b*c
		const __m256 aa = _mm256_blend_ps(v, sw, 0xAA);
		const __m256 cs = _mm256_blend_ps(cd, sd, 0xAA);
		const __m256 bt = _mm256_mul_ps(_mm256_permute_ps(v, 0xF5), _mm256_blend_ps(sd, cd, 0xAA));
		_mm256_storeu_ps(x + 2 * i, _mm256_fmaddsub_ps(aa, cs, bt));
	}
	for (; i < pairs; i++) {
		const float a = x[2 * i], b = x[2 * i + 1];
		x[2 * i] = rope_a(a, b, c[i], s[i]);
		x[2 * i + 1] = rope_b(a, b, c[i], s[i]);
	}
}

// vk_rms_norm_rows is vk_rms_norm in place on rows rows of width values
// each (a token's heads for a Q/K norm): one call where a call per row
// cost more than the row.
void vk_rms_norm_rows(float *x, const float *w, int64_t width, int64_t rows, float eps) {
	for (int64_t r = 0; r < rows; r++) vk_rms_norm(x + r * width, x + r * width, w, width, eps);
}

// vk_rope_rows is vk_rope on rows rows of width values each (a token's
// heads), all at the same position.
void vk_rope_rows(float *x, int64_t width, int64_t rows, const float *c, const float *s, int64_t pairs, int neox) {
	for (int64_t r = 0; r < rows; r++) vk_rope(x + r * width, c, s, pairs, neox);
}
