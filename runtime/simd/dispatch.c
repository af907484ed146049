//go:build cgo && amd64

#include "simd.h"
#include <stddef.h>
#include <immintrin.h>

#define DECL(sfx)                                                                                            \
	void mm_q4_0##sfx(const MMArgs *);                                                                  \
	void mm_q4_1##sfx(const MMArgs *);                                                                  \
	void mm_q5_0##sfx(const MMArgs *);                                                                  \
	void mm_q5_1##sfx(const MMArgs *);                                                                  \
	void mm_q8_0##sfx(const MMArgs *);                                                                  \
	void mm_mxfp4##sfx(const MMArgs *);                                                                 \
	void mm_q2_k##sfx(const MMArgs *);                                                                  \
	void mm_q3_k##sfx(const MMArgs *);                                                                  \
	void mm_q4_k##sfx(const MMArgs *);                                                                  \
	void mm_q4_k_lanes##sfx(const MMArgs *);                                                            \
	void mm_q5_k##sfx(const MMArgs *);                                                                  \
	void mm_q6_k##sfx(const MMArgs *);                                                                  \
	void pm_q4_0##sfx(const MMArgs *);                                                                  \
	void pm_q8_0##sfx(const MMArgs *);                                                                  \
	void pm_mxfp4##sfx(const MMArgs *);                                                                 \
	void pm_q4_k##sfx(const MMArgs *);                                                                  \
	void pm_q4_k_lanes##sfx(const MMArgs *);                                                            \
	void pm_q5_k##sfx(const MMArgs *);                                                                  \
	void quant_q8_0##sfx(const float *, int64_t, int8_t *, float *, int32_t *, float *);
DECL(_avx2)
DECL(_vnni)
void mm_f32(const MMArgs *);
void mm_f32_gemm(const MMArgs *);
void mm_f16(const MMArgs *);
void mm_bf16(const MMArgs *);

// Levels: 0 none (portable Go), 1 AVX2+FMA+F16C, 2 that plus AVX-512 F/BW/VL/VNNI.
int vk_cpu_level(void) {
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
	// F16C has no __builtin_cpu_supports name in gcc 12; every AVX2 CPU has it.
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
		return 2;
	return 1;
}

typedef void (*mmfn)(const MMArgs *);

static mmfn pick(int level, int type) {
#define T(id, name) \
	case id: return level >= 2 ? mm_##name##_vnni : mm_##name##_avx2;
	switch (type) {
		T(2, q4_0)
		T(3, q4_1)
		T(6, q5_0)
		T(7, q5_1)
		T(8, q8_0)
		T(10, q2_k)
		T(11, q3_k)
		T(12, q4_k)
		T(1012, q4_k_lanes)
		T(13, q5_k)
		T(14, q6_k)
		T(39, mxfp4)
	case 0: return mm_f32;
	case 1024: return mm_f32_gemm; // simd.F32GEMM
	case 1: return mm_f16;
	case 30: return mm_bf16;
	}
#undef T
	return NULL;
}

int vk_mm(int level, int type, const uint8_t *w, int64_t rb, int64_t r0, int64_t r1, const int8_t *qs, const float *d,
	  const float *s, const int32_t *bs, const float *f, int64_t n, int64_t v0, int64_t v1, float *dst, int64_t ds, int64_t il) {
	mmfn fn = pick(level, type);
	if (!fn || (il && (type == 0 || type == 1 || type == 30 || type == 1024))) return 0;
	MMArgs a = {w, rb, r0, r1, qs, d, s, bs, f, n, v0, v1, dst, ds, il};
	fn(&a);
	return 1;
}

void vk_quant_q8_0(int level, const float *x, int64_t n, int8_t *qs, float *d, int32_t *sums, float *s) {
	if (level >= 2)
		quant_q8_0_vnni(x, n, qs, d, sums, s);
	else
		quant_q8_0_avx2(x, n, qs, d, sums, s);
}

// vk_attn_key_scores is vk_mm for one vector against rows rows rb bytes
// apart, each read once and far from the last (a KV cache's key rows for
// one head): the same kernels, the same results, prefetching rowBytes of
// each row VK_KEY_PF rows ahead, as attn.c's ATT_PF does for an F16 cache.
#define VK_KEY_PF 32
int vk_attn_key_scores(int level, int type, const uint8_t *w, int64_t rb, int64_t rows, int64_t rowBytes, const int8_t *qs,
		       const float *d, const float *s, const int32_t *bs, int64_t n, float *dst) {
	mmfn fn = pick(level, type);
	if (!fn || type == 0 || type == 1 || type == 30) return 0;
	MMArgs a = {w, rb, 0, rows, qs, d, s, bs, NULL, n, 0, 1, dst, 1, 0, VK_KEY_PF, rowBytes};
	fn(&a);
	return 1;
}

int vk_has(int level, int type) { return level > 0 && pick(level, type) != NULL; }

// vk_read_sum streams n bytes (a multiple of 128) with 256-bit loads and
// returns a value that depends on all of them, so the reads cannot be
// dropped: the machine's read bandwidth, measured the way the kernels read.
__attribute__((target("avx2"))) uint64_t vk_read_sum(const uint8_t *p, int64_t n) {
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	for (int64_t i = 0; i + 128 <= n; i += 128) {
		a0 = _mm256_xor_si256(a0, _mm256_loadu_si256((const __m256i *)(p + i)));
		a1 = _mm256_xor_si256(a1, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
		a2 = _mm256_xor_si256(a2, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
		a3 = _mm256_xor_si256(a3, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
	}
	__m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
	return (uint64_t)_mm256_extract_epi64(a, 0) ^ (uint64_t)_mm256_extract_epi64(a, 3);
}

// vk_pm runs the kernels for weights repacked in groups of 8 rows (rb: the
// bytes of one group); r0 and r1 are multiples of 8.
int vk_pm(int level, int type, const uint8_t *w, int64_t rb, int64_t r0, int64_t r1, const int8_t *qs, const float *d,
	  const int32_t *sums, int64_t n, int64_t v0, int64_t v1, float *dst, int64_t ds) {
	mmfn fn = NULL;
	if (level >= 2)
		fn = type == 2 ? pm_q4_0_vnni : type == 8 ? pm_q8_0_vnni : type == 12 ? pm_q4_k_vnni : type == 1012 ? pm_q4_k_lanes_vnni
		   : type == 13 ? pm_q5_k_vnni : type == 39 ? pm_mxfp4_vnni : NULL;
	else if (level == 1)
		fn = type == 2 ? pm_q4_0_avx2 : type == 8 ? pm_q8_0_avx2 : type == 12 ? pm_q4_k_avx2 : type == 1012 ? pm_q4_k_lanes_avx2
		   : type == 13 ? pm_q5_k_avx2 : type == 39 ? pm_mxfp4_avx2 : NULL;
	if (!fn) return 0;
	MMArgs a = {w, rb, r0, r1, qs, d, NULL, sums, NULL, n, v0, v1, dst, ds, 0};
	fn(&a);
	return 1;
}
