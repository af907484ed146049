// Q3_K (256 weights: 32 bytes of high-bit masks, 64 bytes of 2-bit quants,
// 12 bytes of packed 6-bit scales, f16 d; w = d*(sc-32)*(q - (hbit ? 0 : 4))
// per 16 weights): view 0 masks (2 texels), view 1 quants (4 texels),
// view 2 scales (3 R32_UINT words), view 3 d (R16_UINT).
#define ACT_Q8_K // activations as vec_dot_type (actquant.glsl)
#define UNIT 256
#define SUBN 16
uvec4 u_hm[2];
uvec4 u_qs[4];
uvec4 u_sc; // the 16 6-bit scales unpacked, one byte each
float u_d;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_hm[0] = texelFetch(v0, int(idx * 2));
	u_hm[1] = texelFetch(v0, int(idx * 2 + 1));
	[[unroll]] for (uint i = 0; i < 4; i++) u_qs[i] = texelFetch(v1, int(idx * 4 + i));
	uint a0 = texelFetch(v2, int(idx * 3)).x;
	uint a1 = texelFetch(v2, int(idx * 3 + 1)).x;
	uint tmp = texelFetch(v2, int(idx * 3 + 2)).x;
	// ggml's dequantize_row_q3_K unpacking, word by word
	u_sc.x = (a0 & 0x0f0f0f0fu) | (((tmp >> 0) & 0x03030303u) << 4);
	u_sc.y = (a1 & 0x0f0f0f0fu) | (((tmp >> 2) & 0x03030303u) << 4);
	u_sc.z = ((a0 >> 4) & 0x0f0f0f0fu) | (((tmp >> 4) & 0x03030303u) << 4);
	u_sc.w = ((a1 >> 4) & 0x0f0f0f0fu) | (((tmp >> 6) & 0x03030303u) << 4);
	u_d = half_lo(texelFetch(v3, int(idx)).x);
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	const uint n = s / 8u, j = (s % 8u) / 2u, half_ = s % 2u;
	[[unroll]] for (uint l = 0; l < 16; l++) {
		uint b = 32u * n + 16u * half_ + l;
		uint h = 16u * half_ + l;
		uint qv = (texel_byte(u_qs[b >> 4], b & 15u) >> (2u * j)) & 3u;
		uint hb = (texel_byte(u_hm[h >> 4], h & 15u) >> (4u * n + j)) & 1u;
		q[l] = float(int(qv) - int(4u - 4u * hb));
	}
	sc = u_d * float(int(texel_byte(u_sc, s)) - 32);
	bi = 0.0;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): dequant_sub's signed q as int8 lanes. Per byte
// v = q + 4 (0..7: the 2 low bits and the high bit as 4); v + 124 stays
// below 256, so adding it to all four bytes carries into none, and flipping
// bit 7 then leaves v - 4 as a two's complement byte.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	const uint n = s / 8u, j = (s % 8u) / 2u, half_ = s % 2u;
	[[unroll]] for (uint i = 0; i < 4; i++) {
		uint qv = (u_qs[2u * n + half_][i] >> (2u * j)) & 0x03030303u;
		uint hb = (u_hm[half_][i] >> (4u * n + j)) & 0x01010101u;
		wq[i] = ((qv | (hb << 2)) + 0x7C7C7C7Cu) ^ 0x80808080u;
	}
	sc = u_d * float(int(texel_byte(u_sc, s)) - 32);
	bi = 0.0;
}
#endif
