// Q5_K (256 weights: f16 d, f16 dmin, 12 scale bytes, 32 bytes of high
// bits, 128 bytes of nibbles): view 0 nibbles (8 texels), view 1 high bits
// (2 texels), view 2 d|dmin<<16 and the scales.
#define ACT_Q8_K // activations as vec_dot_type (actquant.glsl)
#define UNIT 256
#define SUBN 32
#include "kscale.glsl"
uvec4 u_qs[8];
uvec4 u_qh[2];
uvec4 u_meta;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 8; i++) u_qs[i] = texelFetch(v0, int(idx * 8 + i));
	u_qh[0] = texelFetch(v1, int(idx * 2));
	u_qh[1] = texelFetch(v1, int(idx * 2 + 1));
	u_meta = texelFetch(v2, int(idx));
}
// Sub-block s: nibbles as in Q4_K, fifth bit s of high-bit byte l.
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	const uint j = s / 2u, shift = 4u * (s % 2u);
	[[unroll]] for (uint l = 0; l < 32; l++) {
		uint b = 32u * j + l;
		uint lo = (texel_byte(u_qs[b >> 4], b & 15u) >> shift) & 15u;
		uint hi = (texel_byte(u_qh[l >> 4], l & 15u) >> s) & 1u;
		q[l] = float(lo | (hi << 4));
	}
	float scv, mnv;
	scale_min_k4(u_meta, s, scv, mnv);
	sc = half_lo(u_meta.x) * scv;
	bi = -half_hi(u_meta.x) * mnv;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): dequant_sub's q as int8 lanes: q4_k.glsl's
// nibbles with bit s of high-bit byte l moved to bit 4.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	const uint j = s / 2u, shift = 4u * (s % 2u);
	[[unroll]] for (uint i = 0; i < 8; i++) {
		uint lo = (u_qs[2u * j + (i >> 2)][i & 3u] >> shift) & 0x0F0F0F0Fu;
		uint hi = (u_qh[i >> 2][i & 3u] >> s) & 0x01010101u;
		wq[i] = lo | (hi << 4);
	}
	float scv, mnv;
	scale_min_k4(u_meta, s, scv, mnv);
	sc = half_lo(u_meta.x) * scv;
	bi = -half_hi(u_meta.x) * mnv;
}
#endif
