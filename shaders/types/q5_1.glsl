// Q5_1 (f16 d, f16 m, 32 high bits, nibbles; w = d*q + m): view 0 nibbles,
// view 1 high bits, view 2 d|m<<16.
#define ACT_Q8_1 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_qs;
uint u_qh;
uint u_dm;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_qs = texelFetch(v0, int(idx));
	u_qh = texelFetch(v1, int(idx)).x;
	u_dm = texelFetch(v2, int(idx)).x;
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 16; i++) {
		uint b = texel_byte(u_qs, i);
		q[i] = float((b & 15u) | (((u_qh >> i) << 4) & 0x10u));
		q[i + 16] = float((b >> 4) | ((u_qh >> (i + 12)) & 0x10u));
	}
	sc = half_lo(u_dm);
	bi = half_hi(u_dm);
}

#if defined(IDOT)
#include "q5pack.glsl"
// pack_sub (matvec_id.comp): dequant_sub's q as int8 lanes (q5pack.glsl).
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	q5_pack(wq);
	sc = half_lo(u_dm);
	bi = half_hi(u_dm);
}
#endif
