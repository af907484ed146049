// Q4_K (256 weights: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128
// bytes of nibbles; w = d*sc*q - dmin*m per 32 weights): view 0 nibbles
// (8 texels), view 1 d|dmin<<16 and the scales as one texel.
#define ACT_Q8_K // activations as vec_dot_type (actquant.glsl)
#define UNIT 256
#define SUBN 32
#include "kscale.glsl"
uvec4 u_qs[8];
uvec4 u_meta;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 8; i++) u_qs[i] = texelFetch(v0, int(idx * 8 + i));
	u_meta = texelFetch(v1, int(idx));
}
// Sub-block s: bytes 32*(s/2).. hold it in their low (s even) or high nibbles.
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	const uint j = s / 2u, shift = 4u * (s % 2u);
	[[unroll]] for (uint l = 0; l < 32; l++) {
		uint b = 32u * j + l;
		q[l] = float((texel_byte(u_qs[b >> 4], b & 15u) >> shift) & 15u);
	}
	float scv, mnv;
	scale_min_k4(u_meta, s, scv, mnv);
	sc = half_lo(u_meta.x) * scv;
	bi = -half_hi(u_meta.x) * mnv;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): dequant_sub's q as int8 lanes; sub-block s is
// the low (s even) or high nibbles of texels 2j, 2j+1.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	const uint j = s / 2u, shift = 4u * (s % 2u);
	[[unroll]] for (uint i = 0; i < 8; i++) wq[i] = (u_qs[2u * j + (i >> 2)][i & 3u] >> shift) & 0x0F0F0F0Fu;
	float scv, mnv;
	scale_min_k4(u_meta, s, scv, mnv);
	sc = half_lo(u_meta.x) * scv;
	bi = -half_hi(u_meta.x) * mnv;
}
#endif
