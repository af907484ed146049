package quant

// The K-quants pack 256 weights per super-block with per-sub-block scales.
// Their activations are Q8_K: a float32 d, 256 int8 quants and the sums of
// each 16 quants (bsums), which fold the sub-block minimums into one
// multiply. ggml's generic dot products for Q3_K..Q6_K keep eight float
// partial sums, one per position modulo 8, and add them only at the end; the
// kernels here keep the same eight integer lanes so the float rounding
// matches too.

// q3Scales decodes Q3_K's twelve scale bytes into sixteen signed 6-bit
// scales: the low nibbles of bytes 0..7 then their high nibbles, with the
// top two bits taken from bytes 8..11.
func q3Scales(b *[12]byte) (sc [16]int32) {
	for j := 0; j < 16; j++ {
		lo := b[j%8] >> (4 * (j / 8)) & 0xf
		hi := b[8+j%4] >> (2 * (j / 4)) & 3
		sc[j] = int32(lo|hi<<4) - 32
	}
	return sc
}

// k4Scales decodes the twelve scale bytes shared by Q4_K and Q5_K into eight
// 6-bit scales and eight 6-bit mins (ggml's get_scale_min_k4).
func k4Scales(q *[12]byte) (sc, mn [8]uint8) {
	for j := 0; j < 4; j++ {
		sc[j] = q[j] & 63
		mn[j] = q[j+4] & 63
	}
	for j := 4; j < 8; j++ {
		sc[j] = q[j+4]&0xf | q[j-4]>>6<<4
		mn[j] = q[j+4]>>4 | q[j]>>6<<4
	}
	return sc, mn
}
