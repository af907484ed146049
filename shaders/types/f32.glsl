// F32 rows, padded to whole units of 32 with zeros. View 0: the values as
// R32G32B32A32_UINT, 8 texels per unit.
#define ACT_F32 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_w[8];
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 8; i++) u_w[i] = texelFetch(v0, int(idx * 8 + i));
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 32; i++) q[i] = uintBitsToFloat(u_w[i >> 2][i & 3]);
	sc = 1.0;
	bi = 0.0;
}
