//go:build cgo && amd64

// The value side of attention over a KV cache whose values are kept in any
// of its types (F32, F16 or a block-quantized one), read in place, bit for
// bit as runtime/cpu's portable online softmax (online.add) computes it on
// the values dequantized first: each value is decoded as runtime/quant's
// dequantizer decodes it (q·d, (q−8)·d, (q−16)·d, or q·d + m, each product
// and sum rounded to float32) and folded in with the same FMA. Decoding in
// registers instead of into a widened copy is what makes a quantized cache
// read fewer bytes per step than an F16 one, which is its point.
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "simd.h"
#include "exp4.h"

// ggml type ids of the value types read here.
enum { V_F32 = 0, V_F16 = 1, V_Q4_0 = 2, V_Q4_1 = 3, V_Q5_0 = 6, V_Q5_1 = 7, V_Q8_0 = 8 };

static inline int block_bytes(int vt) {
	switch (vt) {
	case V_Q4_0: return 18;
	case V_Q4_1: return 20;
	case V_Q5_0: return 22;
	case V_Q5_1: return 24;
	case V_Q8_0: return 34;
	}
	return 0;
}

// Bytes of the values d0..d0+n-1 of a row (n a multiple of 32 for the
// block types), for the prefetches.
static inline int64_t span_bytes(int vt, int64_t d0, int64_t n, int64_t *off) {
	const int bb = block_bytes(vt);
	if (bb) {
		*off = d0 / 32 * bb;
		return (n + 31) / 32 * bb;
	}
	const int es = vt == V_F16 ? 2 : 4;
	*off = d0 * es;
	return n * es;
}

// ld8q decodes the 8 values d..d+7 (d a multiple of 8) of the row at p.
static inline __attribute__((always_inline)) __m256 ld8q(const uint8_t *p, int64_t d, const int vt) {
	if (vt == V_F32) return _mm256_loadu_ps((const float *)p + d);
	if (vt == V_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + d)));
	const int bb = block_bytes(vt);
	const uint8_t *b = p + d / 32 * bb;
	const int j = (int)(d % 32);
	uint16_t h;
	memcpy(&h, b, 2);
	const __m256 dv = _mm256_set1_ps(_cvtsh_ss(h));
	if (vt == V_Q8_0) {
		const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 2 + j)));
		return _mm256_mul_ps(_mm256_cvtepi32_ps(q), dv);
	}
	// nibble codes: byte k holds element k (low) and k+16 (high)
	const int nib = vt == V_Q4_0 ? 2 : vt == V_Q4_1 ? 4 : vt == V_Q5_0 ? 6 : 8;
	__m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b + nib + (j & 15))));
	q = j < 16 ? _mm256_and_si256(q, _mm256_set1_epi32(15)) : _mm256_srli_epi32(q, 4);
	if (vt == V_Q5_0 || vt == V_Q5_1) {
		uint32_t qh;
		memcpy(&qh, b + (vt == V_Q5_0 ? 2 : 4), 4);
		// element e's fifth bit is bit e of qh
		const __m256i hb = _mm256_srlv_epi32(_mm256_set1_epi32((int)(qh >> j)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		q = _mm256_or_si256(q, _mm256_slli_epi32(_mm256_and_si256(hb, _mm256_set1_epi32(1)), 4));
	}
	if (vt == V_Q4_0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(8));
	if (vt == V_Q5_0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(16));
	const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(q), dv);
	if (vt == V_Q4_1 || vt == V_Q5_1) {
		uint16_t mh;
		memcpy(&mh, b + 2, 2);
		return _mm256_add_ps(x, _mm256_set1_ps(_cvtsh_ss(mh)));
	}
	return x;
}

static inline __m256 round16v(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }

// AQ_PF is how many positions ahead the value rows are prefetched: the
// same reasoning and distance as attn.c's ATT_PF.
#define AQ_PF 32

// ld32q decodes the 32 values of the block at b into v[0..3], as ld8q
// does eight at a time (the same floats), reading its scales once.
static inline __attribute__((always_inline)) void ld32q(const uint8_t *b, const int vt, __m256 *v) {
	uint16_t h;
	memcpy(&h, b, 2);
	const __m256 dv = _mm256_set1_ps(_cvtsh_ss(h));
	__m128i q8[4];
	if (vt == V_Q8_0) {
		const __m128i lo = _mm_loadu_si128((const __m128i *)(b + 2)), hi = _mm_loadu_si128((const __m128i *)(b + 18));
		q8[0] = lo, q8[1] = _mm_srli_si128(lo, 8), q8[2] = hi, q8[3] = _mm_srli_si128(hi, 8);
		for (int k = 0; k < 4; k++) v[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8[k])), dv);
		return;
	}
	const int nib = vt == V_Q4_0 ? 2 : vt == V_Q4_1 ? 4 : vt == V_Q5_0 ? 6 : 8;
	const __m128i raw = _mm_loadu_si128((const __m128i *)(b + nib));
	const __m128i lo = _mm_and_si128(raw, _mm_set1_epi8(15)), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(15));
	q8[0] = lo, q8[1] = _mm_srli_si128(lo, 8), q8[2] = hi, q8[3] = _mm_srli_si128(hi, 8);
	uint32_t qh = 0;
	if (vt == V_Q5_0 || vt == V_Q5_1) memcpy(&qh, b + (vt == V_Q5_0 ? 2 : 4), 4);
	__m256 m = _mm256_setzero_ps();
	if (vt == V_Q4_1 || vt == V_Q5_1) {
		uint16_t mh;
		memcpy(&mh, b + 2, 2);
		m = _mm256_set1_ps(_cvtsh_ss(mh));
	}
	for (int k = 0; k < 4; k++) {
		__m256i q = _mm256_cvtepu8_epi32(q8[k]);
		if (vt == V_Q5_0 || vt == V_Q5_1) {
			// element e's fifth bit is bit e of qh
			const __m256i hb = _mm256_srlv_epi32(_mm256_set1_epi32((int)(qh >> (8 * k))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
			q = _mm256_or_si256(q, _mm256_slli_epi32(_mm256_and_si256(hb, _mm256_set1_epi32(1)), 4));
		}
		if (vt == V_Q4_0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(8));
		if (vt == V_Q5_0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(16));
		v[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(q), dv);
		if (vt == V_Q4_1 || vt == V_Q5_1) v[k] = _mm256_add_ps(v[k], m);
	}
}


// accq is the accumulation of attn.c's acc64 for W8*8 values of out from
// d0 on (W8 8, or 4 for a 32-value tail), kept in registers across the
// positions, reading the values of type vt (a block type decoded a whole
// block at a time).
static inline __attribute__((always_inline)) void accq(float *out, const uint8_t *vals, int64_t stride, const int vt, int64_t d0, const int W8,
						       int64_t span, const float *ms, const float *vs, const uint8_t *rescale, const int f16) {
	__m256 o[8];
	for (int i = 0; i < W8; i++) o[i] = _mm256_loadu_ps(out + d0 + 8 * i);
	int64_t off;
	const int64_t pb = span_bytes(vt, d0, 8 * W8, &off);
	const int bb = block_bytes(vt);
	for (int64_t t = 0; t < span; t++) {
		const uint8_t *v = vals + t * stride;
		if (t + AQ_PF < span) {
			const char *r = (const char *)vals + (t + AQ_PF) * stride + off;
			for (int64_t o2 = 0; o2 < pb; o2 += 64) _mm_prefetch(r + o2, _MM_HINT_T0);
		}
		if (rescale[t]) {
			const __m256 m = _mm256_set1_ps(ms[t]);
			for (int i = 0; i < W8; i++) {
				o[i] = _mm256_mul_ps(o[i], m);
				if (f16) o[i] = round16v(o[i]);
			}
		}
		const __m256 w = _mm256_set1_ps(vs[t]);
		__m256 x[8];
		if (bb)
			for (int k = 0; k < W8 / 4; k++) ld32q(v + (d0 / 32 + k) * bb, vt, x + 4 * k);
		else
			for (int i = 0; i < W8; i++) x[i] = ld8q(v, d0 + 8 * i, vt);
		for (int i = 0; i < W8; i++) {
			o[i] = _mm256_fmadd_ps(x[i], w, o[i]);
			if (f16) o[i] = round16v(o[i]);
		}
	}
	for (int i = 0; i < W8; i++) _mm256_storeu_ps(out + d0 + 8 * i, o[i]);
}

// accq_VT runs accq over a head: 64 values at a time, then a tail of 32
// (block types), or of 8 to 56 values eight at a time (F16, F32).
#define ACCQ(VT)                                                                                                   \
	static void accq_##VT(float *out, const uint8_t *vals, int64_t stride, int64_t hd, int64_t span, const float *ms, \
			      const float *vs, const uint8_t *rescale, int f16) {                                       \
		int64_t d0 = 0;                                                                                      \
		for (; d0 + 64 <= hd; d0 += 64) {                                                                    \
			if (f16)                                                                                     \
				accq(out, vals, stride, VT, d0, 8, span, ms, vs, rescale, 1);                        \
			else                                                                                         \
				accq(out, vals, stride, VT, d0, 8, span, ms, vs, rescale, 0);                        \
		}                                                                                                    \
		for (; d0 + 32 <= hd; d0 += 32) {                                                                    \
			if (f16)                                                                                     \
				accq(out, vals, stride, VT, d0, 4, span, ms, vs, rescale, 1);                        \
			else                                                                                         \
				accq(out, vals, stride, VT, d0, 4, span, ms, vs, rescale, 0);                        \
		}                                                                                                    \
		for (; d0 < hd; d0 += 8) {                                                                           \
			if (f16)                                                                                     \
				accq(out, vals, stride, VT, d0, 1, span, ms, vs, rescale, 1);                        \
			else                                                                                         \
				accq(out, vals, stride, VT, d0, 1, span, ms, vs, rescale, 0);                        \
		}                                                                                                    \
	}
ACCQ(V_F32)
ACCQ(V_F16)
ACCQ(V_Q4_0)
ACCQ(V_Q4_1)
ACCQ(V_Q5_0)
ACCQ(V_Q5_1)
ACCQ(V_Q8_0)

// vk_attn_values_has reports whether vk_attn_values reads values of type vt
// with head size hd.
int vk_attn_values_has(int vt, int64_t hd) {
	if (hd <= 0 || hd % 8) return 0;
	switch (vt) {
	case V_F32:
	case V_F16: return 1;
	case V_Q4_0:
	case V_Q4_1:
	case V_Q5_0:
	case V_Q5_1:
	case V_Q8_0: return hd % 32 == 0;
	}
	return 0;
}

// vk_attn_values folds span more positions into a running online softmax:
// their raw scores sc (times scale: the score online.add receives), values
// of type vt stride bytes apart from vals; state holds the running maximum
// and sum, out (hd floats) the running weighted sum. Per position, in
// order, as online.add: a score above the maximum rescales out by
// e^(max−s) (rounded to F16 when f16) and weighs its value 1; another
// weighs it e^(s−max) (expf8: the portable exp64, eight at a time); out =
// fma(v, weight, out) (rounded to F16 when f16); sum = fma(sum, rescale,
// weight). work holds 3*span floats and rescale span bytes.
void vk_attn_values(const float *sc, int64_t span, float scale, const uint8_t *vals, int vt, int64_t stride, float *out, int64_t hd,
		    int f16, float *state, float *work, uint8_t *rescale) {
	float *ex = work, *ms = work + span, *vs = work + 2 * span;
	float m = state[0];
	for (int64_t t = 0; t < span; t++) {
		const float s = sc[t] * scale;
		if (s > m) {
			ex[t] = m - s;
			rescale[t] = 1;
			m = s;
		} else {
			ex[t] = s - m;
			rescale[t] = 0;
		}
	}
	int64_t t = 0;
	for (; t + 8 <= span; t += 8) _mm256_storeu_ps(ms + t, expf8(_mm256_loadu_ps(ex + t)));
	if (t < span) {
		float b[8] = {0};
		for (int64_t k = t; k < span; k++) b[k - t] = ex[k];
		_mm256_storeu_ps(b, expf8(_mm256_loadu_ps(b)));
		for (int64_t k = t; k < span; k++) ms[k] = b[k - t];
	}
	float sum = state[1];
	for (t = 0; t < span; t++) {
		if (rescale[t]) {
			vs[t] = 1;
		} else {
			vs[t] = ms[t];
			ms[t] = 1;
		}
		sum = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(sum), _mm_set_ss(ms[t]), _mm_set_ss(vs[t])));
	}
	state[0] = m;
	state[1] = sum;
	switch (vt) {
	case V_F32: accq_V_F32(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_F16: accq_V_F16(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_Q4_0: accq_V_Q4_0(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_Q4_1: accq_V_Q4_1(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_Q5_0: accq_V_Q5_0(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_Q5_1: accq_V_Q5_1(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	case V_Q8_0: accq_V_Q8_0(out, vals, stride, hd, span, ms, vs, rescale, f16); break;
	}
}
