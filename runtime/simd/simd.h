#include <stdint.h>

// One product: dst[v*ds + r] = row r . vector v for rows [r0, r1) and
// vectors [v0, v1). Rows are rb bytes apart from w. Vector v's activations
// are qs[v*n ...] with per-block scales d (and s, bs) or floats f[v*n ...].
typedef struct {
	const uint8_t *w;
	int64_t rb, r0, r1;
	const int8_t *qs;
	const float *d, *s;
	const int32_t *bs;
	const float *f;
	int64_t n, v0, v1;
	float *dst;
	int64_t ds;
	int64_t il; // rows interleaved block by block in groups of 8; rb is one group's bytes
	// pf > 0: one vector against rows read once, rows far apart (a KV
	// cache's key rows): each tile of rows prefetches the pfb bytes of the
	// rows pf ahead
	int64_t pf, pfb;
} MMArgs;

int vk_cpu_level(void);
int vk_has(int level, int type);
uint64_t vk_read_sum(const uint8_t *p, int64_t n);
int vk_mm(int level, int type, const uint8_t *w, int64_t rb, int64_t r0, int64_t r1, const int8_t *qs, const float *d,
	  const float *s, const int32_t *bs, const float *f, int64_t n, int64_t v0, int64_t v1, float *dst, int64_t ds, int64_t il);
void vk_quant_q8_0(int level, const float *x, int64_t n, int8_t *qs, float *d, int32_t *sums, float *s);
int vk_pm(int level, int type, const uint8_t *w, int64_t rb, int64_t r0, int64_t r1, const int8_t *qs, const float *d,
	  const int32_t *sums, int64_t n, int64_t v0, int64_t v1, float *dst, int64_t ds);
void vk_f32_to_f16(uint16_t *dst, const float *src, int64_t n);
void vk_round_f16(float *dst, const float *src, int64_t n);
void vk_rms_norm(float *out, const float *x, const float *w, int64_t n, float eps);
void vk_rope(float *x, const float *c, const float *s, int64_t pairs, int neox);
void vk_rms_norm_rows(float *x, const float *w, int64_t width, int64_t rows, float eps);
void vk_rope_rows(float *x, int64_t width, int64_t rows, const float *c, const float *s, int64_t pairs, int neox);
void vk_swiglu(float *gate, const float *up, int64_t n);
void vk_causal_conv(float *out, const float *state, const float *in, const float *wt, int64_t C, int64_t K);
void vk_delta_step(float *m, const float *q, const float *k, const float *v, float *o, int64_t S, float decay,
		   float beta, float scale);
void vk_ssm_scan_head(float *state, const float *x, const float *B, const float *C, float *y, int64_t P, int64_t N,
		      float dA, float dt);
void vk_attn_online(const float *q, const void *keys, const void *vals, int64_t stride, int h, float *out, int64_t hd,
		    int64_t span, float scale, int f16, float *work, uint8_t *rescale);
void vk_attn_scores(const float *q, const float *keys, int64_t hd, int64_t span, float *scores);
void vk_attn_accumulate(float *out, const float *vals, int64_t hd, int64_t span, const float *ms, const float *vs,
			const uint8_t *rescale, int f16);
void vk_f16_to_f32(float *dst, const uint16_t *src, int64_t n);
void vk_f16_rows(float *dst, const uint16_t *src, int64_t cols, int64_t stride, int64_t rows);
void vk_quant_q8_k(const float *x, int64_t n, int8_t *qs, float *d, int32_t *bsums);
int vk_attn_key_scores(int level, int type, const uint8_t *w, int64_t rb, int64_t rows, int64_t rowBytes, const int8_t *qs,
		       const float *d, const float *s, const int32_t *bs, int64_t n, float *dst);
int vk_attn_values_has(int vt, int64_t hd);
void vk_attn_values(const float *sc, int64_t span, float scale, const uint8_t *vals, int vt, int64_t stride, float *out, int64_t hd,
		    int f16, float *state, float *work, uint8_t *rescale);
