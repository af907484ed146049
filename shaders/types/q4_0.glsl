// Q4_0 (32 weights: f16 d, 16 bytes of nibbles; w = d*(q-8)), split into
// view 0: the nibbles, one texel per block; view 1: d as R16_UINT.
#define ACT_Q8_0 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_qs;
float u_d;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_qs = texelFetch(v0, int(idx));
	u_d = half_lo(texelFetch(v1, int(idx)).x);
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 16; i++) {
		uint b = texel_byte(u_qs, i);
		q[i] = float(b & 15u);
		q[i + 16] = float(b >> 4);
	}
	sc = u_d;
	bi = -8.0 * u_d;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): the same q as dequant_sub, four per word as
// int8 lanes for a packed dot product: the low nibbles of bytes 0..15 are
// weights 0..15, the high nibbles 16..31, so a mask (and a shift) gives
// four weights in the order x's words hold them.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 4; i++) {
		wq[i] = u_qs[i] & 0x0F0F0F0Fu;
		wq[i + 4] = (u_qs[i] >> 4) & 0x0F0F0F0Fu;
	}
	sc = u_d;
	bi = -8.0 * u_d;
}
#endif
