// Q6_K (256 weights: 128 bytes low nibbles, 64 bytes of 2-bit highs, 16
// signed scale bytes, f16 d; w = d*sc*(q-32) per 16 weights): view 0 low
// nibbles (8 texels), view 1 highs (4 texels), view 2 scales (1 texel),
// view 3 d.
#define ACT_Q8_K // activations as vec_dot_type (actquant.glsl)
#define UNIT 256
#define SUBN 16
uvec4 u_ql[8];
uvec4 u_qh[4];
uvec4 u_sc;
float u_d;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 8; i++) u_ql[i] = texelFetch(v0, int(idx * 8 + i));
	[[unroll]] for (uint i = 0; i < 4; i++) u_qh[i] = texelFetch(v1, int(idx * 4 + i));
	u_sc = texelFetch(v2, int(idx));
	u_d = half_lo(texelFetch(v3, int(idx)).x);
}
// Sub-block s: half n = s/8, quarter k = (s%8)/2 (which nibble and which 2
// high bits), positions l = 16*(s%2) .. +15 of that quarter.
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	const uint n = s / 8u, k = (s % 8u) / 2u, half_ = s % 2u;
	[[unroll]] for (uint i = 0; i < 16; i++) {
		uint l = 16u * half_ + i;
		uint lb = 64u * n + l + 32u * (k & 1u);
		uint hb = 32u * n + l;
		uint lo = (texel_byte(u_ql[lb >> 4], lb & 15u) >> (4u * (k >> 1))) & 15u;
		uint hi = (texel_byte(u_qh[hb >> 4], hb & 15u) >> (2u * k)) & 3u;
		q[i] = float(lo | (hi << 4));
	}
	sc = u_d * float(texel_sbyte(u_sc, s));
	bi = -32.0 * sc;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): dequant_sub's q (0..63) as int8 lanes: the
// nibbles of texel (64n + 32(k&1) + 16·half)/16, the 2 high bits of texel
// 2n + half.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	const uint n = s / 8u, k = (s % 8u) / 2u, half_ = s % 2u;
	[[unroll]] for (uint i = 0; i < 4; i++) {
		uint lo = (u_ql[4u * n + 2u * (k & 1u) + half_][i] >> (4u * (k >> 1))) & 0x0F0F0F0Fu;
		uint hi = (u_qh[2u * n + half_][i] >> (2u * k)) & 0x03030303u;
		wq[i] = lo | (hi << 4);
	}
	sc = u_d * float(texel_sbyte(u_sc, s));
	bi = -32.0 * sc;
}
#endif
