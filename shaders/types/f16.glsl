// F16 rows padded to units of 32. View 0: 4 texels of 8 halves per unit.
#define ACT_F16 // activations as vec_dot_type (actquant.glsl)
#define UNIT 32
#define SUBN 32
uvec4 u_w[4];
void load_unit(usamplerBuffer v0, usamplerBuffer v1, usamplerBuffer v2, usamplerBuffer v3, uint idx) {
	[[unroll]] for (uint i = 0; i < 4; i++) u_w[i] = texelFetch(v0, int(idx * 4 + i));
}
void dequant_sub(const uint s, out float q[SUBN], out float sc, out float bi) {
	[[unroll]] for (uint i = 0; i < 16; i++) {
		vec2 h = unpackHalf2x16(u_w[i >> 2][i & 3]);
		q[2 * i] = h.x;
		q[2 * i + 1] = h.y;
	}
	sc = 1.0;
	bi = 0.0;
}
