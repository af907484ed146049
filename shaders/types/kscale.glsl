// Q4_K/Q5_K 6-bit scale and min j (0..7) from the 12 packed bytes held in
// meta.yzw (ggml's get_scale_min_k4).
void scale_min_k4(uvec4 meta, const uint j, out float sc, out float mn) {
	uvec4 m = uvec4(meta.y, meta.z, meta.w, 0u);
	if (j < 4u) {
		sc = float(texel_byte(m, j) & 63u);
		mn = float(texel_byte(m, j + 4u) & 63u);
	} else {
		sc = float((texel_byte(m, j + 4u) & 0xFu) | ((texel_byte(m, j - 4u) >> 6) << 4));
		mn = float((texel_byte(m, j + 4u) >> 4) | ((texel_byte(m, j) >> 6) << 4));
	}
}
