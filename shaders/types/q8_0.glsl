// Q8_0 (f16 d, 32 signed bytes; w = d*q): view 0 the bytes, 2 texels per
// block; view 1 d.
#define ACT_Q8_0 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_qs[2];
float u_d;
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	u_qs[0] = texelFetch(v0, int(idx * 2));
	u_qs[1] = texelFetch(v0, int(idx * 2 + 1));
	u_d = half_lo(texelFetch(v1, int(idx)).x);
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 32; i++) q[i] = float(texel_sbyte(u_qs[i >> 4], i & 15u));
	sc = u_d;
	bi = 0.0;
}

#if defined(IDOT)
// pack_sub (matvec_id.comp): the signed bytes are already int8 lanes.
void pack_sub(const uint s, out uint wq[SUBN / 4], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 8; i++) wq[i] = u_qs[i >> 2][i & 3u];
	sc = u_d;
	bi = 0.0;
}
#endif
