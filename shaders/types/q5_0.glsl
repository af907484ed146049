// Q5_0 (f16 d, 32 high bits, 16 bytes of nibbles; w = d*(q-16)): view 0
// nibbles, view 1 high bits (R32_UINT), view 2 d (R16_UINT).
#define ACT_Q8_0 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_qs;
uint u_qh;
float u_d;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_qs = texelFetch(v0, int(idx));
	u_qh = texelFetch(v1, int(idx)).x;
	u_d = half_lo(texelFetch(v2, int(idx)).x);
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 16; i++) {
		uint b = texel_byte(u_qs, i);
		q[i] = float((b & 15u) | (((u_qh >> i) << 4) & 0x10u));
		q[i + 16] = float((b >> 4) | ((u_qh >> (i + 12)) & 0x10u));
	}
	sc = u_d;
	bi = -16.0 * u_d;
}

#if defined(IDOT)
#include "q5pack.glsl"
// pack_sub (matvec_id.comp): dequant_sub's q as int8 lanes (q5pack.glsl).
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	q5_pack(wq);
	sc = u_d;
	bi = -16.0 * u_d;
}
#endif
