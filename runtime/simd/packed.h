// Kernels for weights repacked in groups of 8 rows (runtime/quant/packed.go):
// per group and block, the 8 rows' fp16 scales (16 bytes), then their
// quants interleaved 4 bytes at a time so that one 32-bit lane holds 4
// consecutive quants of one row. Broadcasting 4 activations against such a
// vector gives 8 rows' partial dot products in 8 lanes with one
// vpdpbusd (or maddubs+madd); after a block's loads, lane r holds row r's
// exact integer block sum with no horizontal reduction. The float work
// then runs for the 8 rows in one vector in the portable order, so results
// stay bit-identical.
//
//   Q4_0: 16 + 128 bytes per group-block; load k (0..3) holds bytes 4k..4k+3
//         of each row's 16 nibble bytes: low nibbles are elements 4k..4k+3,
//         high nibbles elements 16+4k..16+4k+3.
//   Q8_0: 16 + 256 bytes; load k (0..7) holds elements 4k..4k+3 (int8).
//   MXFP4: 8 + 128 bytes: the 8 rows' E8M0 scale bytes, then the nibbles
//         as Q4_0's (gpt-oss's expert banks).

//   Q4_K: per super-block (runtime/quant's packQ45K): 8 fp16 d, 8 fp16
//         dmin, scales as bytes [sub-block][row], mins as int16 pairs
//         [sub-block pair][row][2], then per sub-block pair 8 loads whose
//         lane r holds bytes 4k..4k+3 of row r's 32 quant bytes: low
//         nibbles elements 4k..4k+3 of the even sub-block, high ones of
//         the odd. Q5_K (+256 bytes before the quants): lane r of load k
//         holds row r's high-bit bytes 4k..4k+3 (bit s: sub-block s).
//         Per sub-block the 8 rows' exact dots land in 8 lanes,
//         times the scales (mullo), summed; the mins take one madd per
//         sub-block pair against the activations' 32-element sums.

#define PQ4 (16 + 128)
#define PQ8 (16 + 256)
#define PMX (8 + 128)
#define PQ4K (224 + 1024)
#define PQ5K (PQ4K + 256)

INL __m256i FN(bcast4)(const int8_t *p) {
	int32_t v;
	memcpy(&v, p, 4);
	return _mm256_set1_epi32(v);
}

// Q4_0 and MXFP4 groups: rows [r0, r1) (multiples of 8) x vectors [v0,
// v1); A->rb is the bytes of one group of 8 rows.
INL void FN(ptile)(const int T, const MMArgs *A, int64_t r, int64_t v, const int VT) {
	const int64_t nb = A->n / 32;
	const int GB = T == T_Q4_0 ? PQ4 : PMX, QO = T == T_MXFP4 ? 8 : 16;
	const uint8_t *g = A->w + (r / 8) * A->rb;
	// this call's rows end at r1: what lies past them is another
	// goroutine's chunk or no weight at all
	const uint8_t *end = A->w + (A->r1 / 8) * A->rb, *pf = g + PF_AHEAD;
	const __m256i m4 = _mm256_set1_epi8(0x0F);
	__m256 sum[8];
	for (int j = 0; j < VT; j++) sum[j] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++, g += GB) {
		FN(pfetch)(&pf, g + PF_AHEAD + GB, end);
		const __m256 dx = T == T_MXFP4 ? FN(e8m0h8)(g) : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g));
		__m256i q[8];
		for (int k = 0; k < 4; k++) {
			__m256i bits = _mm256_loadu_si256((const __m256i *)(g + QO + 32 * k));
			q[k] = _mm256_and_si256(bits, m4);
			q[k + 4] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
			if (T == T_MXFP4) q[k] = FN(mxfp4u)(q[k]), q[k + 4] = FN(mxfp4u)(q[k + 4]);
		}
		for (int j = 0; j < VT; j++) {
			const int8_t *y = A->qs + (v + j) * A->n + b * 32;
			const int32_t ys = A->bs[(v + j) * nb + b];
			__m256i s0 = _mm256_set1_epi32((T == T_Q4_0 ? -8 : -12) * ys), s1 = _mm256_setzero_si256();
			for (int k = 0; k < 8; k += 2) {
				s0 = FN(dpus)(s0, q[k], FN(bcast4)(y + 4 * k));
				s1 = FN(dpus)(s1, q[k + 1], FN(bcast4)(y + 4 * k + 4));
			}
			const __m256 S = CVT(_mm256_add_epi32(s0, s1));
			const __m256 dy = _mm256_set1_ps(A->d[(v + j) * nb + b]);
			const __m256 t = T == T_Q4_0 ? MUL(MUL(S, dx), dy) : MUL(MUL(dy, dx), S);
			sum[j] = ADD(sum[j], t);
		}
	}
	for (int j = 0; j < VT; j++) {
		float out[8];
		_mm256_storeu_ps(out, sum[j]);
		for (int i = 0; i < 8; i++) A->dst[(v + j) * A->ds + r + i] = out[i];
	}
}

// Q8_0 groups in ggml's AVX2 lanes (runtime/quant's dotQ8_0), not in the
// portable kernels' per-block order the others follow: load k of
// a block holds elements 4k..4k+3 of each row, so its dot in lane r is
// row r's ggml lane k; each k keeps its own float accumulator,
// fma(dx*dy, P_k, acc_k), and the eight are reduced per row as hsum8 at
// the end.
INL void FN(ptile_q8)(const MMArgs *A, int64_t r, int64_t v) {
	const int64_t nb = A->n / 32;
	const uint8_t *g = A->w + (r / 8) * A->rb;
	const uint8_t *end = A->w + (A->r1 / 8) * A->rb, *pf = g + PF_AHEAD;
	__m256 acc[8];
	for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
	const int8_t *y = A->qs + v * A->n;
	for (int64_t b = 0; b < nb; b++, g += PQ8, y += 32) {
		FN(pfetch)(&pf, g + PF_AHEAD + PQ8, end);
		const __m256 dd = MUL(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g)), _mm256_set1_ps(A->d[v * nb + b]));
		for (int k = 0; k < 8; k++) {
			const __m256i q = _mm256_loadu_si256((const __m256i *)(g + 16 + 32 * k));
			const __m256i P = FN(dpus)(_mm256_setzero_si256(), _mm256_sign_epi8(q, q), _mm256_sign_epi8(FN(bcast4)(y + 4 * k), q));
			acc[k] = _mm256_fmadd_ps(dd, CVT(P), acc[k]);
		}
	}
	const __m256 h = ADD(ADD(ADD(acc[0], acc[4]), ADD(acc[2], acc[6])), ADD(ADD(acc[1], acc[5]), ADD(acc[3], acc[7])));
	float out[8];
	_mm256_storeu_ps(out, h);
	for (int i = 0; i < 8; i++) A->dst[v * A->ds + r + i] = out[i];
}

// kminpair is sub-block pair p's mins of a Q4_K/Q5_K super-block against
// the activations, the 8 rows' exact integers: one madd of the mins'
// int16 pairs against the pair's two 32-element sums (bs: the
// activations' sums per 16).
INL __m256i FN(kminpair)(const uint8_t *g, const int32_t *bs, int p) {
	const int32_t lo = bs[4 * p] + bs[4 * p + 1], hi = bs[4 * p + 2] + bs[4 * p + 3];
	const __m256i pair = _mm256_set1_epi32((int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xffff)));
	return _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(g + 96 + 32 * p)), pair);
}

// kmins is a super-block's mins, all four pairs' integers summed.
INL __m256i FN(kmins)(const uint8_t *g, const int32_t *bs) {
	__m256i M = _mm256_setzero_si256();
	for (int p = 0; p < 4; p++) M = _mm256_add_epi32(M, FN(kminpair)(g, bs, p));
	return M;
}

INL __m256i FN(q5hbit)(__m256i hb, int s) {
	// bit s of each high-bit byte, moved to bit 4
	const __m256i h = s < 4 ? _mm256_slli_epi16(hb, 4 - s) : _mm256_srli_epi16(hb, s - 4);
	return _mm256_and_si256(h, _mm256_set1_epi8(0x10));
}

// pk_pairdots sets P[j][k] to a Q4_K or Q5_K group's super-block dots
// for vector v+j in ggml's AVX2 lanes (lane k: elements 4k..4k+3 of each
// row's sub-blocks, scale*dot summed over them). P is an exact integer,
// so how it is summed is free: a sub-block pair's two dots (each within
// ±4*31*128, an int16) go into the halves of one lane and one madd
// against the pair's scales adds both scaled, where a mullo_epi32 per dot
// cost two slow uops. q5 takes each quant's fifth bit from the 256
// high-bit bytes before the quants. The quants are decoded once for VT
// vectors.
INL void FN(pk_pairdots)(const MMArgs *A, const uint8_t *g, const int q5, int64_t v, int64_t b, const int VT, __m256i P[TVPK][8]) {
	const __m256i m4 = _mm256_set1_epi8(0x0F), lo16 = _mm256_set1_epi32(0xFFFF);
	for (int j = 0; j < VT; j++)
		for (int k = 0; k < 8; k++) P[j][k] = _mm256_setzero_si256();
	for (int p = 0; p < 4; p++) {
		const uint8_t *qp = g + 224 + (q5 ? 256 : 0) + 256 * p;
		// the scales of sub-blocks 2p and 2p+1, the halves of each row's lane
		const __m256i sc = _mm256_or_si256(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(g + 32 + 16 * p))),
		                                   _mm256_slli_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(g + 40 + 16 * p))), 16));
		for (int k = 0; k < 8; k++) {
			const __m256i bits = _mm256_loadu_si256((const __m256i *)(qp + 32 * k));
			__m256i q0 = _mm256_and_si256(bits, m4);
			__m256i q1 = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
			if (q5) {
				const __m256i hb = _mm256_loadu_si256((const __m256i *)(g + 224 + 32 * k));
				q0 = _mm256_or_si256(q0, FN(q5hbit)(hb, 2 * p));
				q1 = _mm256_or_si256(q1, FN(q5hbit)(hb, 2 * p + 1));
			}
			for (int j = 0; j < VT; j++) {
				const int8_t *y = A->qs + (v + j) * A->n + b * 256 + 64 * p + 4 * k;
				const __m256i d0 = FN(dpus)(_mm256_setzero_si256(), q0, FN(bcast4)(y));
				const __m256i d1 = FN(dpus)(_mm256_setzero_si256(), q1, FN(bcast4)(y + 32));
				const __m256i d = _mm256_or_si256(_mm256_and_si256(d0, lo16), _mm256_slli_epi32(d1, 16));
				P[j][k] = _mm256_add_epi32(P[j][k], _mm256_madd_epi16(d, sc));
			}
		}
	}
}

// Q5_K groups in ggml's AVX2 lanes (runtime/quant's dotQ5K) and Q4_K
// groups in its AVX2 vec_dot lanes (simd.Q4KLanes; runtime/quant's
// dotQ4KLanes), with P_k from pk_pairdots: per super-block acc_k =
// fma(dx*dy, P_k, acc_k), at the end hsum8 of the acc plus the mins, per
// row. The mins differ: Q5_K's M is the mins' whole integer, one
// m = fma(-dy*mx, M, m); Q4_K's four lanes are the sub-block pairs, m_p =
// fma(-dy*mx, M_p, m_p), added as (m0+m2)+(m1+m3).
INL void FN(ptile_k45)(const MMArgs *A, int64_t r, int64_t v, const int VT, const int q5) {
	const int64_t nb = A->n / 256, GB = q5 ? PQ5K : PQ4K;
	const uint8_t *g = A->w + (r / 8) * A->rb;
	const uint8_t *end = A->w + (A->r1 / 8) * A->rb, *pf = g + PF_AHEAD;
	__m256 acc[TVPK][8], macc[TVPK][4];
	for (int j = 0; j < VT; j++) {
		for (int k = 0; k < 8; k++) acc[j][k] = _mm256_setzero_ps();
		for (int p = 0; p < 4; p++) macc[j][p] = _mm256_setzero_ps();
	}
	for (int64_t b = 0; b < nb; b++, g += GB) {
		FN(pfetch)(&pf, g + PF_AHEAD + GB, end);
		__m256i P[TVPK][8];
		FN(pk_pairdots)(A, g, q5, v, b, VT, P);
		const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g));
		const __m256 mx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16)));
		for (int j = 0; j < VT; j++) {
			const float yd = A->d[(v + j) * nb + b];
			const __m256 dd = MUL(_mm256_set1_ps(yd), dx);
			const __m256 dm = MUL(_mm256_set1_ps(-yd), mx);
			for (int k = 0; k < 8; k++) acc[j][k] = _mm256_fmadd_ps(dd, CVT(P[j][k]), acc[j][k]);
			const int32_t *bs = A->bs + ((v + j) * nb + b) * 16;
			if (q5) {
				macc[j][0] = _mm256_fmadd_ps(dm, CVT(FN(kmins)(g, bs)), macc[j][0]);
				continue;
			}
			for (int p = 0; p < 4; p++) macc[j][p] = _mm256_fmadd_ps(dm, CVT(FN(kminpair)(g, bs, p)), macc[j][p]);
		}
	}
	for (int j = 0; j < VT; j++) {
		const __m256 *a = acc[j], *m = macc[j];
		const __m256 h = ADD(ADD(ADD(a[0], a[4]), ADD(a[2], a[6])), ADD(ADD(a[1], a[5]), ADD(a[3], a[7])));
		float out[8];
		_mm256_storeu_ps(out, ADD(h, q5 ? m[0] : ADD(ADD(m[0], m[2]), ADD(m[1], m[3]))));
		for (int i = 0; i < 8; i++) A->dst[(v + j) * A->ds + r + i] = out[i];
	}
}

INL void FN(ptile_q5k)(const MMArgs *A, int64_t r, int64_t v, const int VT) { FN(ptile_k45)(A, r, v, VT, 1); }
INL void FN(ptile_q4k)(const MMArgs *A, int64_t r, int64_t v, const int VT) { FN(ptile_k45)(A, r, v, VT, 0); }

// Q4_K groups in ggml's repacked gemv order, as the portable kernel (and
// tile_kq) computes it: per super-block accS = fma(dx*dy, S, accS) and
// accM = fma(mx*dy, M, accM); at the end accS - accM.
INL void FN(ptile_q45k)(const int T, const MMArgs *A, int64_t r, int64_t v, const int VT) {
	const int64_t nb = A->n / 256;
	const int GB = PQ4K, QO = 224;
	const uint8_t *g = A->w + (r / 8) * A->rb;
	const uint8_t *end = A->w + (A->r1 / 8) * A->rb, *pf = g + PF_AHEAD;
	const __m256i m4 = _mm256_set1_epi8(0x0F);
	__m256 accS[8], accM[8];
	for (int j = 0; j < VT; j++) accS[j] = accM[j] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++, g += GB) {
		FN(pfetch)(&pf, g + PF_AHEAD + GB, end);
		__m256i S[8];
		for (int j = 0; j < VT; j++) S[j] = _mm256_setzero_si256();
		for (int s = 0; s < 8; s++) {
			const uint8_t *qp = g + QO + 256 * (s / 2);
			__m256i q[8];
			for (int k = 0; k < 8; k++) {
				const __m256i bits = _mm256_loadu_si256((const __m256i *)(qp + 32 * k));
				q[k] = _mm256_and_si256(s & 1 ? _mm256_srli_epi16(bits, 4) : bits, m4);
			}
			const __m256i sc = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(g + 32 + 8 * s)));
			for (int j = 0; j < VT; j++) {
				const int8_t *y = A->qs + (v + j) * A->n + b * 256 + 32 * s;
				__m256i d0 = _mm256_setzero_si256(), d1 = _mm256_setzero_si256();
				for (int k = 0; k < 8; k += 2) {
					d0 = FN(dpus)(d0, q[k], FN(bcast4)(y + 4 * k));
					d1 = FN(dpus)(d1, q[k + 1], FN(bcast4)(y + 4 * k + 4));
				}
				S[j] = _mm256_add_epi32(S[j], _mm256_mullo_epi32(_mm256_add_epi32(d0, d1), sc));
			}
		}
		const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g));
		const __m256 mx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16)));
		for (int j = 0; j < VT; j++) {
			const __m256i M = FN(kmins)(g, A->bs + ((v + j) * nb + b) * 16);
			const __m256 dy = _mm256_set1_ps(A->d[(v + j) * nb + b]);
			accS[j] = _mm256_fmadd_ps(MUL(dx, dy), CVT(S[j]), accS[j]);
			accM[j] = _mm256_fmadd_ps(MUL(mx, dy), CVT(M), accM[j]);
		}
	}
	for (int j = 0; j < VT; j++) {
		float out[8];
		_mm256_storeu_ps(out, SUB(accS[j], accM[j]));
		for (int i = 0; i < 8; i++) A->dst[(v + j) * A->ds + r + i] = out[i];
	}
}

#define PDRIVER_K(NAME, T)                                                                                   \
	void FN(pm_##NAME)(const MMArgs *A) {                                                                   \
		for (int64_t r = A->r0; r + 8 <= A->r1; r += 8) {                                                   \
			int64_t v = A->v0;                                                                          \
			for (; v + TVPK <= A->v1; v += TVPK) FN(ptile_q45k)(T, A, r, v, TVPK);                       \
			for (; v < A->v1; v++) FN(ptile_q45k)(T, A, r, v, 1);                                       \
		}                                                                                                   \
	}
PDRIVER_K(q4_k, T_Q4_K)

#define PDRIVER1(NAME, TILE)                                                                                 \
	void FN(pm_##NAME)(const MMArgs *A) {                                                                   \
		for (int64_t r = A->r0; r + 8 <= A->r1; r += 8)                                                     \
			for (int64_t v = A->v0; v < A->v1; v++) FN(TILE)(A, r, v);                                   \
	}
PDRIVER1(q8_0, ptile_q8)

#define PDRIVERV(NAME, TILE, VT)                                                                              \
	void FN(pm_##NAME)(const MMArgs *A) {                                                                   \
		for (int64_t r = A->r0; r + 8 <= A->r1; r += 8) {                                                   \
			int64_t v = A->v0;                                                                          \
			for (; v + VT <= A->v1; v += VT) FN(TILE)(A, r, v, VT);                                        \
			for (; v < A->v1; v++) FN(TILE)(A, r, v, 1);                                                  \
		}                                                                                                   \
	}
PDRIVERV(q5_k, ptile_q5k, TVPK)
PDRIVERV(q4_k_lanes, ptile_q4k, TVPK)

#define PDRIVER(NAME, T, VT)                                                                                 \
	void FN(pm_##NAME)(const MMArgs *A) {                                                                   \
		for (int64_t r = A->r0; r + 8 <= A->r1; r += 8) {                                                   \
			int64_t v = A->v0;                                                                          \
			for (; v + VT <= A->v1; v += VT) FN(ptile)(T, A, r, v, VT);                                    \
			for (; v < A->v1; v++) FN(ptile)(T, A, r, v, 1);                                              \
		}                                                                                                   \
	}
PDRIVER(q4_0, T_Q4_0, TVP)
PDRIVER(mxfp4, T_MXFP4, TVP)
