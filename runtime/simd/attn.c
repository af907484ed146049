//go:build cgo && amd64

// Attention helpers, bit-identical to runtime/cpu's portable attention:
// scores as its vecDot (ggml_vec_dot_f16's AVX2 lane order: four 8-lane
// float32 FMA accumulators, reduced pairwise, the tail and total in
// double), and the value accumulation out = fma(v, vs, out), with optional
// F16 rounding after each step. The FMAs are the instructions themselves:
// the portable fma32 rounds exactly as they do.
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "simd.h"
#include "exp4.h"

// Keys and values are read as F32 or as F16 widened on the fly (exactly the
// floats a widened copy would hold), each position stride elements after
// the last: the same loops serve a packed F32 copy and the F16 cache.
static inline __m256 ld8(const void *p, int64_t i, int h) {
	return h ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i))) : _mm256_loadu_ps((const float *)p + i);
}

static inline float ld1(const void *p, int64_t i, int h) { return h ? _cvtsh_ss(((const uint16_t *)p)[i]) : ((const float *)p)[i]; }

static inline float vec_dot(const float *a, const void *b, int64_t n, int h) {
	const int64_t np = n & ~(int64_t)31;
	double s = 0;
	if (np > 0) {
		__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
		for (int64_t i = 0; i < np; i += 32)
			for (int j = 0; j < 4; j++) acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * j), ld8(b, i + 8 * j, h), acc[j]);
		float v[8];
		_mm256_storeu_ps(v, _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3])));
		float t0 = v[0] + v[4], t1 = v[1] + v[5], t2 = v[2] + v[6], t3 = v[3] + v[7];
		s = (double)((t0 + t1) + (t2 + t3));
	}
	for (int64_t i = np; i < n; i++) s += (double)(a[i] * ld1(b, i, h));
	return (float)s;
}

static inline const void *row(const void *p, int64_t t, int64_t stride, int h) {
	return h ? (const void *)((const uint16_t *)p + t * stride) : (const void *)((const float *)p + t * stride);
}

// ATT_PF is how many positions ahead the attention loops prefetch the
// cache rows they read next. A decode step reads each layer's keys and
// values once from memory (the weights' stream has evicted them since the
// last step), a row of each KV head per position, rows a cache line or two
// long and a whole cache row apart, which the hardware prefetchers did not
// run ahead of. 16, 24 and 32 positions ahead timed alike, 4, 8 and 64
// slower, and 32 against none gains more the deeper the cache
// (docs/benchmarks.md, "2026-12-05: CPU attention keeps a head's output in
// registers and prefetches the cache (issue 24)").
#define ATT_PF 32

// pf_row prefetches the lines of position t's row of hd elements.
static inline void pf_row(const void *p, int64_t t, int64_t stride, int h, int64_t hd) {
	const char *r = (const char *)row(p, t, stride, h);
	const int64_t bytes = hd * (h ? 2 : 4);
	for (int64_t o = 0; o < bytes; o += 64) _mm_prefetch(r + o, _MM_HINT_T0);
}

static void scores(const float *q, const void *keys, int64_t stride, int h, int64_t hd, int64_t span, float *sc) {
	for (int64_t t = 0; t < span; t++) {
		if (t + ATT_PF < span) pf_row(keys, t + ATT_PF, stride, h, hd);
		sc[t] = vec_dot(q, row(keys, t, stride, h), hd, h);
	}
}

void vk_attn_scores(const float *q, const float *keys, int64_t hd, int64_t span, float *sc) { scores(q, keys, hd, 0, hd, span, sc); }

static inline __m256 round16v(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }

static inline float round16s(float x) { return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT)); }

// acc64 is accumulate for the 64 values of out from d0 on, kept in eight
// registers across the positions: the same operations in the same order,
// without a store and a reload of out at every position on the chain each
// lane's value depends on, which makes a decode step at depth faster
// (docs/benchmarks.md, "2026-12-05: CPU attention keeps a head's output in
// registers and prefetches the cache (issue 24)").
static inline __attribute__((always_inline)) void acc64_f(float *out, const void *vals, int64_t d0, int64_t stride, int h, int64_t span,
							 const float *ms, const float *vs, const uint8_t *rescale, const int f16) {
	__m256 o[8];
	for (int i = 0; i < 8; i++) o[i] = _mm256_loadu_ps(out + 8 * i);
	for (int64_t t = 0; t < span; t++) {
		const void *v = row(vals, t, stride, h);
		if (t + ATT_PF < span) pf_row((const char *)vals + d0 * (h ? 2 : 4), t + ATT_PF, stride, h, 64);
		if (rescale[t]) {
			const __m256 m = _mm256_set1_ps(ms[t]);
			for (int i = 0; i < 8; i++) {
				o[i] = _mm256_mul_ps(o[i], m);
				if (f16) o[i] = round16v(o[i]);
			}
		}
		const __m256 w = _mm256_set1_ps(vs[t]);
		for (int i = 0; i < 8; i++) {
			o[i] = _mm256_fmadd_ps(ld8(v, d0 + 8 * i, h), w, o[i]);
			if (f16) o[i] = round16v(o[i]);
		}
	}
	for (int i = 0; i < 8; i++) _mm256_storeu_ps(out + 8 * i, o[i]);
}

static void acc64(float *out, const void *vals, int64_t d0, int64_t stride, int h, int64_t span, const float *ms, const float *vs,
		  const uint8_t *rescale, int f16) {
	if (h) {
		if (f16) acc64_f(out, vals, d0, stride, 1, span, ms, vs, rescale, 1);
		else acc64_f(out, vals, d0, stride, 1, span, ms, vs, rescale, 0);
	} else {
		if (f16) acc64_f(out, vals, d0, stride, 0, span, ms, vs, rescale, 1);
		else acc64_f(out, vals, d0, stride, 0, span, ms, vs, rescale, 0);
	}
}

// out (hd floats) goes through span steps: where rescale[t], out *= ms[t]
// (then rounded to F16 when f16); then out = fma(v_t, vs[t], out) (rounded
// to F16 when f16).
static void accumulate(float *out, const void *vals, int64_t stride, int h, int64_t hd, int64_t span, const float *ms,
		       const float *vs, const uint8_t *rescale, int f16) {
	if (hd % 64 == 0) {
		for (int64_t d0 = 0; d0 < hd; d0 += 64) acc64(out + d0, vals, d0, stride, h, span, ms, vs, rescale, f16);
		return;
	}
	for (int64_t t = 0; t < span; t++) {
		const void *v = row(vals, t, stride, h);
		if (t + ATT_PF < span) pf_row(vals, t + ATT_PF, stride, h, hd);
		int64_t d = 0;
		if (rescale[t]) {
			const __m256 m = _mm256_set1_ps(ms[t]);
			for (; d + 8 <= hd; d += 8) {
				__m256 o = _mm256_mul_ps(_mm256_loadu_ps(out + d), m);
				_mm256_storeu_ps(out + d, f16 ? round16v(o) : o);
			}
			for (; d < hd; d++) {
				float o = out[d] * ms[t];
				out[d] = f16 ? round16s(o) : o;
			}
		}
		const __m256 w = _mm256_set1_ps(vs[t]);
		for (d = 0; d + 8 <= hd; d += 8) {
			__m256 o = _mm256_fmadd_ps(ld8(v, d, h), w, _mm256_loadu_ps(out + d));
			_mm256_storeu_ps(out + d, f16 ? round16v(o) : o);
		}
		for (; d < hd; d++) {
			float r = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(ld1(v, d, h)), _mm256_castps256_ps128(w), _mm_set_ss(out[d])));
			out[d] = f16 ? round16s(r) : r;
		}
	}
}

void vk_attn_accumulate(float *out, const float *vals, int64_t hd, int64_t span, const float *ms, const float *vs,
			const uint8_t *rescale, int f16) {
	accumulate(out, vals, hd, 0, hd, span, ms, vs, rescale, f16);
}

// vk_f16_to_f32 widens n halves (exact; F16C quiets signalling NaNs).
void vk_f16_to_f32(float *dst, const uint16_t *src, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
	for (; i < n; i++) dst[i] = _cvtsh_ss(src[i]);
}

// vk_attn_online is one query's attention over span positions without a
// soft-cap, as runtime/cpu's attendOnline computes it, bit for bit: q
// (already rounded to F16 when f16) against each key, scores times
// scale; the running maximum in order, where each position either raises
// it (out is rescaled by e^(old-new)) or is weighted e^(s-max); those
// exponentials eight at a time (expf8: the portable exp64); the sum as a
// chain of single-rounded FMAs; the values (vk_attn_accumulate); out /=
// sum. work holds 3*span floats and span bytes.
// Keys and values are F32 (h 0) or F16 (h 1), stride elements apart.
void vk_attn_online(const float *q, const void *keys, const void *vals, int64_t stride, int h, float *out, int64_t hd,
		    int64_t span, float scale, int f16, float *work, uint8_t *rescale) {
	float *sc = work, *ms = work + span, *vs = work + 2 * span;
	scores(q, keys, stride, h, hd, span, sc);
	float m = -__builtin_inff();
	for (int64_t t = 0; t < span; t++) {
		const float s = sc[t] * scale;
		if (s > m) {
			sc[t] = m - s; // the exponent of the rescale
			rescale[t] = 1;
			m = s;
		} else {
			sc[t] = s - m;
			rescale[t] = 0;
		}
	}
	int64_t t = 0;
	for (; t + 8 <= span; t += 8) _mm256_storeu_ps(ms + t, expf8(_mm256_loadu_ps(sc + t)));
	if (t < span) {
		float b[8] = {0};
		for (int64_t k = t; k < span; k++) b[k - t] = sc[k];
		_mm256_storeu_ps(b, expf8(_mm256_loadu_ps(b)));
		for (int64_t k = t; k < span; k++) ms[k] = b[k - t];
	}
	float sum = 0;
	for (t = 0; t < span; t++) {
		if (rescale[t]) {
			vs[t] = 1;
		} else {
			vs[t] = ms[t];
			ms[t] = 1;
		}
		sum = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(sum), _mm_set_ss(ms[t]), _mm_set_ss(vs[t])));
	}
	memset(out, 0, hd * sizeof(float));
	accumulate(out, vals, stride, h, hd, span, ms, vs, rescale, f16);
	const float inv = 1 / sum;
	for (int64_t d = 0; d < hd; d++) out[d] *= inv;
}

// vk_f32_to_f16 narrows n floats to halves, rounding to nearest even.
void vk_f32_to_f16(uint16_t *dst, const float *src, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
	for (; i < n; i++) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

// vk_round_f16 sets dst to src rounded through F16 (narrowed and widened).
void vk_round_f16(float *dst, const float *src, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, round16v(_mm256_loadu_ps(src + i)));
	for (; i < n; i++) dst[i] = round16s(src[i]);
}

// vk_f16_rows widens rows rows of cols halves, src rows stride halves
// apart, into dst rows of cols floats.
void vk_f16_rows(float *dst, const uint16_t *src, int64_t cols, int64_t stride, int64_t rows) {
	for (int64_t r = 0; r < rows; r++) vk_f16_to_f32(dst + r * cols, src + r * stride, cols);
}

// vk_quant_q8_k is quantize_row_q8_K_ref as the portable quantQ8KBlock
// computes it, per 256-element block: the first element of largest
// magnitude sets iscale = -127/max; quants are iscale*x rounded to nearest
// even (cvtps with the default rounding, as ggml's nearest_int) and clamped
// to 127 (by the saturating packs); bsums per 16; d = 1/iscale.
void vk_quant_q8_k(const float *x, int64_t n, int8_t *qs, float *d, int32_t *bsums) {
	const __m256 sign = _mm256_set1_ps(-0.0f);
	for (int64_t b = 0; b < n / 256; b++, x += 256, qs += 256, bsums += 16) {
		__m256 m = _mm256_setzero_ps();
		for (int i = 0; i < 256; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
		__m128 m4 = _mm_max_ps(_mm256_extractf128_ps(m, 1), _mm256_castps256_ps128(m));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		const float amax = _mm_cvtss_f32(m4);
		if (amax == 0) {
			memset(qs, 0, 256);
			memset(bsums, 0, 16 * sizeof(int32_t));
			d[b] = 0;
			continue;
		}
		float mx = 0;
		for (int i = 0; i < 256; i++)
			if (x[i] == amax || x[i] == -amax) {
				mx = x[i];
				break;
			}
		const float iscale = -127.f / mx;
		const __m256 is = _mm256_set1_ps(iscale);
		for (int i = 0; i < 256; i += 32) {
			__m256i v[4];
			for (int k = 0; k < 4; k++) v[k] = _mm256_cvtps_epi32(_mm256_mul_ps(is, _mm256_loadu_ps(x + i + 8 * k)));
			__m256i a = _mm256_packs_epi32(v[0], v[1]), c = _mm256_packs_epi32(v[2], v[3]);
			__m256i q = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(a, c), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
			_mm256_storeu_si256((__m256i *)(qs + i), q);
		}
		for (int j = 0; j < 16; j++) {
			__m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(qs + 16 * j)));
			__m256i s = _mm256_madd_epi16(w, _mm256_set1_epi16(1));
			__m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
			s4 = _mm_add_epi32(s4, _mm_unpackhi_epi64(s4, s4));
			s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 1));
			bsums[j] = _mm_cvtsi128_si32(s4);
		}
		d[b] = 1 / iscale;
	}
}
