// Activation quantization to Q8_0/Q8_1, bit-identical to the portable
// quantizer: as ggml-cpu's x86 quantize_row_q8_0 and quantize_row_q8_1
// (q = x·(127/amax) rounded half to even, d = amax/127; Q8_1 adds the
// fp16 of d·sum(q)).
#ifndef VK_QUANT_ONCE
#define VK_QUANT_ONCE
#endif

void FN(quant_q8_0)(const float *x, int64_t n, int8_t *qs, float *dd, int32_t *sums, float *ss) {
	const __m256 sign = _mm256_set1_ps(-0.0f);
	for (int64_t i = 0; i < n / 32; i++, x += 32) {
		__m256 v[4];
		for (int k = 0; k < 4; k++) v[k] = _mm256_loadu_ps(x + 8 * k);
		__m256 m = _mm256_andnot_ps(sign, v[0]);
		for (int k = 1; k < 4; k++) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[k]));
		__m128 m4 = _mm_max_ps(_mm256_extractf128_ps(m, 1), _mm256_castps256_ps128(m));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		const float amax = _mm_cvtss_f32(m4);
		const float d = amax / 127;
		__m256i iv[4];
		const float id = amax != 0 ? 127 / amax : 0;
		for (int k = 0; k < 4; k++)
			iv[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], _mm256_set1_ps(id)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
		__m256i s = _mm256_add_epi32(_mm256_add_epi32(iv[0], iv[1]), _mm256_add_epi32(iv[2], iv[3]));
		__m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
		s4 = _mm_add_epi32(s4, _mm_unpackhi_epi64(s4, s4));
		s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 1));
		const int32_t sum = _mm_cvtsi128_si32(s4);
		__m256i a = _mm256_packs_epi32(iv[0], iv[1]);
		__m256i c = _mm256_packs_epi32(iv[2], iv[3]);
		a = _mm256_packs_epi16(a, c);
		a = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
		_mm256_storeu_si256((__m256i *)(qs + 32 * i), a);
		dd[i] = _cvtsh_ss(_cvtss_sh(d, 0));
		sums[i] = sum;
		if (ss) ss[i] = _cvtsh_ss(_cvtss_sh((float)sum * d, 0));
	}
}
