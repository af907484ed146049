// Kernel bodies, compiled twice (kern_avx2.c, kern_vnni.c) with different
// target features; see doc.go for the contract.
//
// Order of operations: the portable Go kernels (runtime/quant) compute, per
// row, one exact integer dot product per block, turn it into a float with
// the block's scales in a fixed order of float32 operations, and add the
// blocks' floats in sequence. These kernels compute the same integers with
// SIMD (any grouping of an exact integer sum is the same integer) and then
// do exactly the same float32 operations, without FMA contraction (built
// with -ffp-contract=off), so every result is bit-identical to the portable
// path. The parallelism that makes that cheap: a tile holds eight
// (row, vector) pairs, one per float lane, so the per-block float work and
// the in-order accumulation run for eight pairs in one vector instruction.
// Q8_0, Q5_0, Q4_1 and Q5_K instead keep ggml's eight AVX2 float lanes
// per pair, as their portable kernels do (tile_b32, tile_kq).
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(name, SUFFIX)
#define INL static inline __attribute__((always_inline))

INL float FN(h2f)(const uint8_t *p) {
	uint16_t h;
	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

INL uint16_t FN(u16)(const uint8_t *p) {
	uint16_t h;
	memcpy(&h, p, 2);
	return h;
}

// 32 nibbles: low nibbles of 16 bytes are elements 0..15, high ones 16..31.
INL __m256i FN(nib32)(const uint8_t *p) {
	__m128i t = _mm_loadu_si128((const __m128i *)p);
	__m256i b = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
	return _mm256_and_si256(b, _mm256_set1_epi8(0x0F));
}

// Bit i of the 32-bit word at p as 0xFF in byte i.
INL __m256i FN(bits32)(const uint8_t *p) {
	uint32_t x32;
	memcpy(&x32, p, 4);
	const __m256i shuf = _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303);
	__m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x32), shuf);
	bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
	return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

// acc + sum of 4 products of unsigned a and signed b bytes per 32-bit lane.
INL __m256i FN(dpus)(__m256i acc, __m256i a, __m256i b) {
#if VNNI
	return _mm256_dpbusd_epi32(acc, a, b);
#else
	__m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1));
	return _mm256_add_epi32(acc, p);
#endif
}

// -c * (sum of each 4 activations): folds a weight offset c (8 for Q4_0, 16
// for Q5_0) into the lanes so unsigned weights multiply directly.
INL __m256i FN(negsum)(__m256i y, int c) {
	__m256i s = FN(dpus)(_mm256_setzero_si256(), _mm256_set1_epi8((char)c), y);
	return _mm256_sub_epi32(_mm256_setzero_si256(), s);
}

// MXFP4's halved E8M0 scale, as runtime/quant's e8m0Half builds it: the
// exponent bits directly, e 0 and 1 the denormals 2^-128 and 2^-127.
INL float FN(e8m0h)(uint8_t e) {
	uint32_t b = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
	float f;
	memcpy(&f, &b, 4);
	return f;
}

// The same for 8 scale bytes at once.
INL __m256 FN(e8m0h8)(const uint8_t *p) {
	const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
	const __m256i hi = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
	const __m256i lo = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
	const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
	return _mm256_castsi256_ps(_mm256_blendv_epi8(hi, lo, small));
}

// MXFP4 nibbles (0..15) to their doubled E2M1 values plus 12, so that they
// are unsigned (0..24) and multiply the activations' int8s directly; the 12
// comes back out as -12 times the activations' block sum.
INL __m256i FN(mxfp4u)(__m256i nib) {
	const __m256i tab = _mm256_broadcastsi128_si256(_mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
	return _mm256_shuffle_epi8(tab, nib);
}

// The totals of eight lane vectors, in order.
INL __m256i FN(reduce8)(const __m256i *L) {
	__m256i h0 = _mm256_hadd_epi32(L[0], L[1]), h1 = _mm256_hadd_epi32(L[2], L[3]);
	__m256i h2 = _mm256_hadd_epi32(L[4], L[5]), h3 = _mm256_hadd_epi32(L[6], L[7]);
	__m256i g0 = _mm256_hadd_epi32(h0, h1), g1 = _mm256_hadd_epi32(h2, h3);
	return _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20), _mm256_permute2x128_si256(g0, g1, 0x31));
}

// ggml's hsum_float_8: the upper four lanes added to the lower, then
// lanes 0+2 and 1+3, then those two (runtime/quant's hsum8).
INL float FN(hsum8)(__m256 v) {
	float a[8];
	_mm256_storeu_ps(a, v);
	return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// PF_AHEAD is how far ahead of the block in hand the packed kernels
// prefetch the weights, in bytes: a decode product streams its weights
// once, and the hardware prefetchers alone start too late on each chunk.
// Timed against no software prefetch (docs/benchmarks.md, "2026-12-05:
// the packed CPU kernels prefetch 8 KiB ahead (issue 24)"): a short
// distance was slower than none (the prefetches took load slots for lines
// the hardware had covered), several KiB faster, and 8 KiB the best or
// level with the best on every shape, for the AVX2 kernels too. The
// row-major kernels (Q6_K, Q5_0, ...) are bound by their arithmetic and
// gained nothing, so they do not prefetch.
#define PF_AHEAD 8192

// pfetch issues the prefetches for the lines of [*pf, upto) below end (the
// end of the call's rows: past them lies another goroutine's chunk or no
// weight at all): one per 64-byte line, each once as *pf advances.
INL void FN(pfetch)(const uint8_t **pf, const uint8_t *upto, const uint8_t *end) {
	if (upto > end) upto = end;
	for (; *pf < upto; *pf += 64) _mm_prefetch((const char *)*pf, _MM_HINT_T0);
}

// Row row's first block: rows one after another, or (il) interleaved block
// by block in groups of 8 so that a tile of rows reads one stream.
INL const uint8_t *FN(rowp)(const MMArgs *A, int64_t row, int BB) {
	return A->il ? A->w + (row >> 3) * A->rb + (row & 7) * BB : A->w + row * A->rb;
}

// pfrows prefetches the A->pfb bytes of rows [r0, r1) below A->r1 (rows
// one after another, A->rb bytes apart).
INL void FN(pfrows)(const MMArgs *A, int64_t r0, int64_t r1) {
	if (r1 > A->r1) r1 = A->r1;
	for (int64_t r = r0; r < r1; r++) {
		const char *p = (const char *)(A->w + r * A->rb);
		for (int64_t o = 0; o < A->pfb; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
		_mm_prefetch(p + A->pfb - 1, _MM_HINT_T0);
	}
}

#define F8(a) _mm256_loadu_ps(a)
#define CVT(S) _mm256_cvtepi32_ps(S)
#define MUL _mm256_mul_ps
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps

// The tile drivers: rows [r0, r1) x vectors [v0, v1) in tiles of RT rows x
// VT vectors (RT*VT <= 8 pairs).
#define DRIVER(NAME, T, RT, VT)                                                                              \
	void FN(mm_##NAME)(const MMArgs *A) {                                                                   \
		int64_t v = A->v0;                                                                                  \
		for (; v + VT <= A->v1; v += VT) {                                                                  \
			int64_t r = A->r0;                                                                          \
			for (; r + RT <= A->r1; r += RT) FN(tile_##NAME)(T, A, r, v, RT, VT);                          \
			for (; r < A->r1; r++) FN(tile_##NAME)(T, A, r, v, 1, VT);                                     \
		}                                                                                                   \
		for (; v < A->v1; v++) {                                                                            \
			int64_t r = A->r0;                                                                          \
			for (; r + 8 <= A->r1; r += 8) {                                                            \
				if (A->pf) FN(pfrows)(A, r + A->pf, r + A->pf + 8);                                  \
				FN(tile_##NAME)(T, A, r, v, 8, 1);                                                  \
			}                                                                                           \
			switch (A->r1 - r) {                                                                        \
			case 7: FN(tile_##NAME)(T, A, r, v, 7, 1); break;                                           \
			case 6: FN(tile_##NAME)(T, A, r, v, 6, 1); break;                                           \
			case 5: FN(tile_##NAME)(T, A, r, v, 5, 1); break;                                           \
			case 4: FN(tile_##NAME)(T, A, r, v, 4, 1); break;                                           \
			case 3: FN(tile_##NAME)(T, A, r, v, 3, 1); break;                                           \
			case 2: FN(tile_##NAME)(T, A, r, v, 2, 1); break;                                           \
			case 1: FN(tile_##NAME)(T, A, r, v, 1, 1); break;                                           \
			}                                                                                           \
		}                                                                                                   \
	}

#define STORE_PAIRS(sum)                                                                                    \
	{                                                                                                   \
		float out[8];                                                                               \
		_mm256_storeu_ps(out, sum);                                                                 \
		for (int i = 0; i < RT; i++)                                                                \
			for (int j = 0; j < VT; j++) A->dst[(v + j) * A->ds + r + i] = out[i * VT + j];    \
	}

// ggml type ids
enum { T_Q4_0 = 2, T_Q4_1 = 3, T_Q5_0 = 6, T_Q5_1 = 7, T_Q8_0 = 8, T_Q2_K = 10, T_Q3_K = 11, T_Q4_K = 12, T_Q5_K = 13, T_Q6_K = 14, T_MXFP4 = 39 };
// Q4_K in ggml's AVX2 vec_dot lanes (simd.Q4KLanes)
enum { T_Q4_KL = 1012 };

// ---- 32-element blocks against Q8_0/Q8_1.
//   Q4_0 (18 B: d, 16 nibble bytes)          t = (S*dx)*dy,           S = sum (q-8)*y
//   Q4_1 (20 B: d, m, 16 nibble bytes)       t = (dx*dy)*S + mx*sy,   S = sum q*y
//   Q5_0 (22 B: d, qh, 16 nibble bytes)      t = (dx*dy)*S,           S = sum (q-16)*y
//   Q5_1 (24 B: d, m, qh, 16 nibble bytes)   t = (dx*dy)*S + mx*sy
//   Q8_0 (34 B: d, 32 int8)                  t = S*(dx*dy)
//   MXFP4 (17 B: e8m0 e, 16 nibble bytes)    t = (dy*dx)*S,           S = sum kv[q]*y, dx = 2^(e-128)
// and sum += t block by block, as the portable kernels do. Q8_0, Q5_0 and
// Q4_1 keep ggml's AVX2 lanes instead (runtime/quant's dotQ8_0, dotQ5_0,
// dotQ4_1; Q4_1's mx*sy summed apart with fmaf): L's eight lanes
// (four consecutive elements each) go to eight float lanes per pair,
// acc = fma(dx*dy, L, acc), reduced by hsum8 at the end.
INL void FN(tile_b32)(const int T, const MMArgs *A, int64_t r, int64_t v, const int RT, const int VT) {
	const int64_t nb = A->n / 32;
	const int BB = T == T_Q4_0 ? 18 : T == T_Q4_1 ? 20 : T == T_Q5_0 ? 22 : T == T_Q5_1 ? 24 : T == T_MXFP4 ? 17 : 34;
	const int Q1 = T == T_Q4_1 || T == T_Q5_1;
	__m256 sum = _mm256_setzero_ps();
	__m256 lanes[8];
	float summs[8] = {0};
	if (T == T_Q8_0 || T == T_Q5_0 || T == T_Q4_1)
		for (int p = 0; p < 8; p++) lanes[p] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		__m256i y[8], c[8], L[8];
		float dx[8], dy[8], mx[8], sy[8];
		for (int p = RT * VT; p < 8; p++) {
			L[p] = _mm256_setzero_si256();
			dx[p] = dy[p] = mx[p] = sy[p] = 0;
		}
		for (int j = 0; j < VT; j++) {
			y[j] = _mm256_loadu_si256((const __m256i *)(A->qs + (v + j) * A->n + b * 32));
			if (T == T_Q4_0) c[j] = FN(negsum)(y[j], 8);
			if (T == T_Q5_0) c[j] = FN(negsum)(y[j], 16);
			if (T == T_MXFP4) c[j] = FN(negsum)(y[j], 12);
		}
		for (int i = 0; i < RT; i++) {
			const uint8_t *p = FN(rowp)(A, r + i, BB) + b * (A->il ? 8 * BB : BB);
			__m256i q, qa = _mm256_setzero_si256();
			if (T == T_Q4_0) q = FN(nib32)(p + 2);
			if (T == T_Q4_1) q = FN(nib32)(p + 4);
			if (T == T_Q5_0) q = _mm256_or_si256(FN(nib32)(p + 6), _mm256_and_si256(FN(bits32)(p + 2), _mm256_set1_epi8(0x10)));
			if (T == T_Q5_1) q = _mm256_or_si256(FN(nib32)(p + 8), _mm256_and_si256(FN(bits32)(p + 4), _mm256_set1_epi8(0x10)));
			if (T == T_Q8_0) {
				q = _mm256_loadu_si256((const __m256i *)(p + 2));
				qa = _mm256_sign_epi8(q, q);
			}
			if (T == T_MXFP4) q = FN(mxfp4u)(FN(nib32)(p + 1));
			const float d = T == T_MXFP4 ? FN(e8m0h)(p[0]) : FN(h2f)(p), m = Q1 ? FN(h2f)(p + 2) : 0;
			for (int j = 0; j < VT; j++) {
				const int k = i * VT + j;
				if (T == T_Q4_0 || T == T_Q5_0 || T == T_MXFP4)
					L[k] = FN(dpus)(c[j], q, y[j]);
				else if (T == T_Q8_0)
					L[k] = FN(dpus)(_mm256_setzero_si256(), qa, _mm256_sign_epi8(y[j], q));
				else
					L[k] = FN(dpus)(_mm256_setzero_si256(), q, y[j]);
				dx[k] = d;
				dy[k] = A->d[(v + j) * nb + b];
				if (Q1) {
					mx[k] = m;
					sy[k] = A->s[(v + j) * nb + b];
				}
			}
		}
		if (T == T_Q8_0 || T == T_Q5_0 || T == T_Q4_1) {
			for (int p = 0; p < RT * VT; p++) {
				lanes[p] = _mm256_fmadd_ps(_mm256_set1_ps(dx[p] * dy[p]), CVT(L[p]), lanes[p]);
				if (T == T_Q4_1) summs[p] = fmaf(mx[p], sy[p], summs[p]);
			}
			continue;
		}
		const __m256 S = CVT(FN(reduce8)(L));
		__m256 t;
		if (T == T_Q4_0) t = MUL(MUL(S, F8(dx)), F8(dy));
		if (T == T_Q8_0) t = MUL(S, MUL(F8(dx), F8(dy)));
		if (T == T_MXFP4) t = MUL(MUL(F8(dy), F8(dx)), S);
		if (Q1) t = ADD(MUL(MUL(F8(dx), F8(dy)), S), MUL(F8(mx), F8(sy)));
		sum = ADD(sum, t);
	}
	if (T == T_Q8_0 || T == T_Q5_0 || T == T_Q4_1) {
		float h[8] = {0};
		for (int p = 0; p < RT * VT; p++) h[p] = FN(hsum8)(lanes[p]) + summs[p];
		sum = _mm256_loadu_ps(h);
	}
	STORE_PAIRS(sum)
}
#define tile_q4_0 tile_b32
#define tile_q4_1 tile_b32
#define tile_q5_0 tile_b32
#define tile_q5_1 tile_b32
#define tile_q8_0 tile_b32
#define tile_mxfp4 tile_b32
DRIVER(q4_0, T_Q4_0, TRQ, TVQ)
DRIVER(q4_1, T_Q4_1, TRQ, TVQ)
DRIVER(q5_0, T_Q5_0, TRQ, TVQ)
DRIVER(q5_1, T_Q5_1, TRQ, TVQ)
DRIVER(q8_0, T_Q8_0, TRQ, TVQ)
DRIVER(mxfp4, T_MXFP4, TRQ, TVQ)

// ---- K-quants against Q8_K (256 per super-block; y has a float d and
// 16 bsums). S is the exact integer sum, M the integer that carries the
// mins; per super-block:
//   Q2_K (84 B)   t = (dy*dx)*S - (dy*mx)*M
//   Q3_K (110 B)  t = (dx*dy)*S            (the -4 offset folded into S)
//   Q4_K (144 B)  ggml's repacked gemv (runtime/quant's dotQ4K): accS =
//                 fma(dx*dy, S, accS), accM = fma(mx*dy, M, accM); at the
//                 end accS - accM. T_Q4_KL keeps ggml's AVX2 vec_dot lanes
//                 instead (runtime/quant's dotQ4KLanes): S's eight lanes to
//                 eight float lanes per pair, fma(dy*dx, S, acc), M's four
//                 (sub-block pairs) likewise with -dy*mx; at the end
//                 hsum8(acc) + (m0+m2)+(m1+m3)
//   Q5_K (176 B)  ggml's AVX2 lanes (runtime/quant's dotQ5K): S's eight
//                 lanes to eight float lanes per pair, fma(dy*dx, S, acc),
//                 summs = fmaf(-dy*mx, M, summs); at the end hsum8(acc) +
//                 summs
//   Q6_K (210 B)  t = (dx*dy)*S            (the -32 offset folded into S)
#define YQK(j) (A->qs + (v + (j)) * A->n + b * 256)
#define YBS(j) (A->bs + ((v + (j)) * nb + b) * 16)

// The 8 per-32 sums of a Q8_K block's bsums as int16.
INL __m128i FN(bsums32)(const int32_t *bs) {
	__m128i a = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)bs), _mm_loadu_si128((const __m128i *)(bs + 4)));
	__m128i c = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(bs + 8)), _mm_loadu_si128((const __m128i *)(bs + 12)));
	return _mm_hadd_epi16(a, c);
}

INL int32_t FN(hsum4i)(__m128i x) {
	x = _mm_add_epi32(x, _mm_unpackhi_epi64(x, x));
	x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 1));
	return _mm_cvtsi128_si32(x);
}

// Q4_K/Q5_K scales and mins (ggml's get_scale_min_k4) as 16 int16: 0..7
// scales, 8..15 mins.
INL __m256i FN(k4scales)(const uint8_t *p) {
	uint32_t u[4];
	memcpy(u, p, 12);
	const uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
	u[3] = ((u[2] >> 4) & k2) | (((u[1] >> 6) & k3) << 4);
	uint32_t aux = u[1] & k1;
	u[1] = (u[2] & k2) | (((u[0] >> 6) & k3) << 4);
	u[2] = aux;
	u[0] &= k1;
	return _mm256_cvtepu8_epi16(_mm_set_epi32((int)u[3], (int)u[2], (int)u[1], (int)u[0]));
}

// A 32-element chunk's two 16-element scales as int16 lanes.
INL __m256i FN(sc16x2)(int lo, int hi) { return _mm256_set_m128i(_mm_set1_epi16((short)hi), _mm_set1_epi16((short)lo)); }

INL void FN(tile_kq)(const int T, const MMArgs *A, int64_t r, int64_t v, const int RT, const int VT) {
	const int64_t nb = A->n / 256;
	const int BB = T == T_Q2_K ? 84 : T == T_Q3_K ? 110 : T == T_Q4_K || T == T_Q4_KL ? 144 : T == T_Q5_K ? 176 : 210;
	const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
	__m256 sum = _mm256_setzero_ps(), accM = _mm256_setzero_ps();
	__m256 lanes[8];
	float summs[8] = {0};
	__m128 mlanes[8];
	if (T == T_Q5_K || T == T_Q4_KL)
		for (int p = 0; p < 8; p++) lanes[p] = _mm256_setzero_ps(), mlanes[p] = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		__m256i L[8];
		__m128i ML[8];
		int32_t M[8];
		float dx[8], dy[8], mx[8];
		for (int p = RT * VT; p < 8; p++) {
			L[p] = _mm256_setzero_si256();
			M[p] = 0;
			dx[p] = dy[p] = mx[p] = 0;
		}
		for (int i = 0; i < RT; i++) {
			const uint8_t *p = FN(rowp)(A, r + i, BB) + b * (A->il ? 8 * BB : BB);
			__m256i q[8], s[8];
			__m128i mins = _mm_setzero_si128();
			float d = 0, m = 0;
			if (T == T_Q4_K || T == T_Q4_KL || T == T_Q5_K) {
				d = FN(h2f)(p), m = FN(h2f)(p + 2);
				const __m256i ms = FN(k4scales)(p + 4);
				mins = _mm256_extracti128_si256(ms, 1);
				int16_t sc[8];
				_mm_storeu_si128((__m128i *)sc, _mm256_castsi256_si128(ms));
				const __m256i hb = T == T_Q5_K ? _mm256_loadu_si256((const __m256i *)(p + 16)) : _mm256_setzero_si256();
				const uint8_t *qs = p + (T == T_Q5_K ? 48 : 16);
				for (int k = 0; k < 4; k++) {
					__m256i bits = _mm256_loadu_si256((const __m256i *)(qs + 32 * k));
					q[2 * k] = _mm256_and_si256(bits, m4);
					q[2 * k + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
					if (T == T_Q5_K) {
						q[2 * k] = _mm256_or_si256(q[2 * k], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * k), one), 4));
						q[2 * k + 1] = _mm256_or_si256(q[2 * k + 1], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * k + 1), one), 4));
					}
					s[2 * k] = _mm256_set1_epi16(sc[2 * k]);
					s[2 * k + 1] = _mm256_set1_epi16(sc[2 * k + 1]);
				}
			}
			if (T == T_Q6_K) {
				d = FN(h2f)(p + 208);
				for (int h = 0; h < 2; h++) {
					const __m256i b1 = _mm256_loadu_si256((const __m256i *)(p + 64 * h));
					const __m256i b2 = _mm256_loadu_si256((const __m256i *)(p + 64 * h + 32));
					const __m256i bh = _mm256_loadu_si256((const __m256i *)(p + 128 + 32 * h));
					q[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(b1, m4), _mm256_slli_epi16(_mm256_and_si256(bh, m3), 4));
					q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(b2, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bh, 2), m3), 4));
					q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b1, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bh, 4), m3), 4));
					q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b2, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bh, 6), m3), 4));
				}
				const int8_t *sc = (const int8_t *)(p + 192);
				for (int k = 0; k < 8; k++) s[k] = FN(sc16x2)(sc[2 * k], sc[2 * k + 1]);
			}
			if (T == T_Q2_K) {
				d = FN(h2f)(p + 80), m = FN(h2f)(p + 82);
				for (int h = 0; h < 2; h++) {
					const __m256i bits = _mm256_loadu_si256((const __m256i *)(p + 16 + 32 * h));
					for (int k = 0; k < 4; k++) {
						q[4 * h + k] = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
						const int is = 8 * h + 2 * k;
						s[4 * h + k] = FN(sc16x2)(p[is] & 15, p[is + 1] & 15);
					}
				}
				mins = _mm_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)p), 4), _mm_set1_epi8(0xF)));
			}
			if (T == T_Q3_K) {
				d = FN(h2f)(p + 108);
				uint32_t a[4];
				memcpy(a, p + 96, 12);
				const uint32_t k1 = 0x03030303, k2 = 0x0f0f0f0f;
				const uint32_t t0 = (a[0] & k2) | (((a[2] >> 0) & k1) << 4);
				const uint32_t t1 = (a[1] & k2) | (((a[2] >> 2) & k1) << 4);
				const uint32_t t2 = ((a[0] >> 4) & k2) | (((a[2] >> 4) & k1) << 4);
				const uint32_t t3 = ((a[1] >> 4) & k2) | (((a[2] >> 6) & k1) << 4);
				int8_t sc[16];
				memcpy(sc, &t0, 4), memcpy(sc + 4, &t1, 4), memcpy(sc + 8, &t2, 4), memcpy(sc + 12, &t3, 4);
				const __m256i hb = _mm256_loadu_si256((const __m256i *)p);
				for (int h = 0; h < 2; h++) {
					const __m256i bits = _mm256_loadu_si256((const __m256i *)(p + 32 + 32 * h));
					for (int k = 0; k < 4; k++) {
						// value = low 2 bits + 4*hmask bit, minus 4 below (via the bsums)
						__m256i hi = _mm256_and_si256(_mm256_srli_epi16(hb, 4 * h + k), one);
						q[4 * h + k] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3), _mm256_slli_epi16(hi, 2));
						const int is = 8 * h + 2 * k;
						s[4 * h + k] = FN(sc16x2)(sc[is] - 32, sc[is + 1] - 32);
					}
				}
				// the -4 offset: -4 * sum_j scale_j * bsum_j, carried in M with t's sign below
				int16_t s16[16];
				for (int j = 0; j < 16; j++) s16[j] = (int16_t)(sc[j] - 32);
				for (int j = 0; j < VT; j++) {
					const int32_t *bs = YBS(j);
					int32_t acc = 0;
					for (int jj = 0; jj < 16; jj++) acc += s16[jj] * bs[jj];
					M[i * VT + j] = -4 * acc;
				}
			}
			for (int j = 0; j < VT; j++) {
				const int k = i * VT + j;
				const int8_t *y8 = YQK(j);
				const float yd = A->d[(v + j) * nb + b];
				__m256i acc = _mm256_setzero_si256();
				for (int c = 0; c < 8; c++) {
					__m256i y = _mm256_loadu_si256((const __m256i *)(y8 + 32 * c));
					__m256i p16 = _mm256_maddubs_epi16(q[c], y);
					if (T == T_Q6_K) p16 = _mm256_sub_epi16(p16, _mm256_maddubs_epi16(_mm256_set1_epi8(32), y));
					acc = _mm256_add_epi32(acc, _mm256_madd_epi16(s[c], p16));
				}
				if (T == T_Q3_K) acc = _mm256_add_epi32(acc, _mm256_setr_epi32(M[k], 0, 0, 0, 0, 0, 0, 0));
				L[k] = acc;
				if (T == T_Q2_K) {
					// sum_j bsum_j * min_j, 16 mins of 16 elements
					const int32_t *bs = YBS(j);
					__m128i b0 = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)bs), _mm_loadu_si128((const __m128i *)(bs + 4)));
					__m128i b1 = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(bs + 8)), _mm_loadu_si128((const __m128i *)(bs + 12)));
					__m128i mn1 = _mm_cvtepu8_epi16(_mm_srli_si128(_mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)p), 4), _mm_set1_epi8(0xF)), 8));
					M[k] = FN(hsum4i)(_mm_add_epi32(_mm_madd_epi16(mins, b0), _mm_madd_epi16(mn1, b1)));
				}
				if (T == T_Q4_K || T == T_Q5_K) M[k] = FN(hsum4i)(_mm_madd_epi16(mins, FN(bsums32)(YBS(j))));
				if (T == T_Q4_KL) ML[k] = _mm_madd_epi16(mins, FN(bsums32)(YBS(j)));
				dx[k] = d;
				mx[k] = m;
				dy[k] = yd;
			}
		}
		if (T == T_Q5_K || T == T_Q4_KL) {
			for (int p = 0; p < RT * VT; p++) {
				lanes[p] = _mm256_fmadd_ps(_mm256_set1_ps(dy[p] * dx[p]), CVT(L[p]), lanes[p]);
				if (T == T_Q5_K) summs[p] = fmaf(-dy[p] * mx[p], (float)M[p], summs[p]);
				if (T == T_Q4_KL) mlanes[p] = _mm_fmadd_ps(_mm_set1_ps(-dy[p] * mx[p]), _mm_cvtepi32_ps(ML[p]), mlanes[p]);
			}
			continue;
		}
		const __m256 S = CVT(FN(reduce8)(L));
		__m256 t;
		if (T == T_Q2_K) t = SUB(MUL(MUL(F8(dy), F8(dx)), S), MUL(MUL(F8(dy), F8(mx)), CVT(_mm256_loadu_si256((const __m256i *)M))));
		if (T == T_Q4_K) {
			// sum is the S accumulator here
			sum = _mm256_fmadd_ps(MUL(F8(dx), F8(dy)), S, sum);
			accM = _mm256_fmadd_ps(MUL(F8(mx), F8(dy)), CVT(_mm256_loadu_si256((const __m256i *)M)), accM);
			continue;
		}
		if (T == T_Q3_K || T == T_Q6_K) t = MUL(MUL(F8(dx), F8(dy)), S);
		sum = ADD(sum, t);
	}
	if (T == T_Q4_K) sum = SUB(sum, accM);
	if (T == T_Q5_K || T == T_Q4_KL) {
		float h[8] = {0};
		for (int p = 0; p < RT * VT; p++) {
			float m[4];
			_mm_storeu_ps(m, mlanes[p]);
			h[p] = FN(hsum8)(lanes[p]) + (T == T_Q5_K ? summs[p] : ((m[0] + m[2]) + (m[1] + m[3])));
		}
		sum = _mm256_loadu_ps(h);
	}
	STORE_PAIRS(sum)
}
#define tile_q2_k tile_kq
#define tile_q3_k tile_kq
#define tile_q4_k tile_kq
#define tile_q4_k_lanes tile_kq
#define tile_q5_k tile_kq
#define tile_q6_k tile_kq
DRIVER(q2_k, T_Q2_K, TRK, TVK)
DRIVER(q3_k, T_Q3_K, TRK, TVK)
DRIVER(q4_k, T_Q4_K, TRK, TVK)
DRIVER(q4_k_lanes, T_Q4_KL, TRK, TVK)
DRIVER(q5_k, T_Q5_K, TRK, TVK)
DRIVER(q6_k, T_Q6_K, TRK, TVK)
