// MXFP4 (32 weights: an E8M0 scale byte e, 16 bytes of nibbles, low nibbles
// weights 0..15, high 16..31; w = kv[q]·2^(e-128) with kv the E2M1 values
// doubled, {0,1,2,3,4,6,8,12} and their negatives for q ≥ 8), split into
// view 0: the nibbles, one texel per block; view 1: e as R8_UINT. gpt-oss
// ships its experts this way (ggml type 39); runtime/quant/mxfp4.go is the
// portable form.
#define ACT_Q8_0 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_qs;
float u_d;

// kv[q] by arithmetic: a table indexed at run time is a memory load per
// weight on llvmpipe. Magnitudes 0..3 are the index; 4..7 are 2 or 3
// (the low bit) shifted by (m >> 1) - 1: 4, 6, 8, 12.
float kv_mxfp4(uint q) {
	uint m = q & 7u;
	float v = m < 4u ? float(m) : float((2u + (m & 1u)) << ((m >> 1) - 1u));
	return (q & 8u) != 0u ? -v : v;
}

// 2^(e-128) as ggml's ggml_e8m0_to_fp32_half builds it: the exponent bits
// directly, e 0 and 1 as the denormals 2^-128 and 2^-127.
float e8m0_half(uint e) {
	return uintBitsToFloat(e < 2u ? (0x00200000u << e) : ((e - 1u) << 23));
}

void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_qs = texelFetch(v0, int(idx));
	u_d = e8m0_half(texelFetch(v1, int(idx)).x);
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 16; i++) {
		uint b = texel_byte(u_qs, i);
		q[i] = kv_mxfp4(b & 15u);
		q[i + 16] = kv_mxfp4(b >> 4);
	}
	sc = u_d;
	bi = 0.0;
}

#if defined(IDOT)
// kvi_mxfp4 is kv_mxfp4 as an int8 lane (low byte of the result).
uint kvi_mxfp4(uint q) {
	uint m = q & 7u;
	int v = m < 4u ? int(m) : int((2u + (m & 1u)) << ((m >> 1) - 1u));
	return uint((q & 8u) != 0u ? -v : v) & 0xFFu;
}
// pack_sub (matvec_id.comp): the doubled E2M1 values as int8 lanes, one
// nibble at a time (no SWAR form: the values are a table, not bits).
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 4; i++) {
		uint w = u_qs[i], lo = 0u, hi = 0u;
		[[unroll]] for (uint c = 0; c < 4; c++) {
			lo |= kvi_mxfp4((w >> (8u * c)) & 15u) << (8u * c);
			hi |= kvi_mxfp4((w >> (8u * c + 4u)) & 15u) << (8u * c);
		}
		wq[i] = lo;
		wq[i + 4] = hi;
	}
	sc = u_d;
	bi = 0.0;
}
#endif
