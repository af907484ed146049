// Q2_K (256 weights: 16 scale bytes (4-bit scale | 4-bit min << 4), 64 bytes
// of 2-bit quants, f16 d, f16 dmin; w = d*sc*q - dmin*m per 16 weights):
// view 0 quants (4 texels), view 1 scales (1 texel), view 2 d|dmin<<16.
#define ACT_Q8_K // activations as vec_dot_type (actquant.glsl)
#define UNIT 256
#define SUBN 16
uvec4 u_qs[4];
uvec4 u_sc;
uint u_dm;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 4; i++) u_qs[i] = texelFetch(v0, int(idx * 4 + i));
	u_sc = texelFetch(v1, int(idx));
	u_dm = texelFetch(v2, int(idx)).x;
}
// Sub-block s: half n = s/8 of the super-block, shift 2*j with j = (s%8)/2,
// quant bytes 32n + 16*(s%2) .. +15.
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	const uint n = s / 8u, j = (s % 8u) / 2u, base = 32u * n + 16u * (s % 2u);
	[[unroll]] for (uint l = 0; l < 16; l++) {
		uint b = base + l;
		q[l] = float((texel_byte(u_qs[b >> 4], b & 15u) >> (2u * j)) & 3u);
	}
	uint scb = texel_byte(u_sc, s);
	sc = half_lo(u_dm) * float(scb & 15u);
	bi = -half_hi(u_dm) * float(scb >> 4);
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): dequant_sub's q as int8 lanes; sub-block s's
// 16 quant bytes are texel 2n + s%2, shifted by 2j.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	const uint n = s / 8u, j = (s % 8u) / 2u;
	[[unroll]] for (uint i = 0; i < 4; i++) wq[i] = (u_qs[2u * n + s % 2u][i] >> (2u * j)) & 0x03030303u;
	uint scb = texel_byte(u_sc, s);
	sc = half_lo(u_dm) * float(scb & 15u);
	bi = -half_hi(u_dm) * float(scb >> 4);
}
#endif
