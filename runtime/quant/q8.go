package quant

// Q8_0 block (34 bytes): fp16 d, then 32 int8 quants; x = q*d.

func dequantQ8_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[34]byte)(src[i*34:])
		y := (*[32]float32)(dst[i*32:])
		d := f16le(b[0:])
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0_generic. The sum is unrolled into four
// chains so the multiplies overlap; integer addition order is immaterial.
func dotQ8_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, qs := a.d[:nb], a.qs[:nb*32]
	row = row[:nb*34]
	var sumf float32
	for i := range d {
		// Advancing the slices, rather than indexing from their start,
		// keeps each block's base in one register so the byte loads fold
		// their constant offsets.
		b := (*[34]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[34:], qs[32:]
		s0 := int32(int8(b[2]))*int32(y[0]) +
			int32(int8(b[6]))*int32(y[4]) +
			int32(int8(b[10]))*int32(y[8]) +
			int32(int8(b[14]))*int32(y[12]) +
			int32(int8(b[18]))*int32(y[16]) +
			int32(int8(b[22]))*int32(y[20]) +
			int32(int8(b[26]))*int32(y[24]) +
			int32(int8(b[30]))*int32(y[28])
		s1 := int32(int8(b[3]))*int32(y[1]) +
			int32(int8(b[7]))*int32(y[5]) +
			int32(int8(b[11]))*int32(y[9]) +
			int32(int8(b[15]))*int32(y[13]) +
			int32(int8(b[19]))*int32(y[17]) +
			int32(int8(b[23]))*int32(y[21]) +
			int32(int8(b[27]))*int32(y[25]) +
			int32(int8(b[31]))*int32(y[29])
		s2 := int32(int8(b[4]))*int32(y[2]) +
			int32(int8(b[8]))*int32(y[6]) +
			int32(int8(b[12]))*int32(y[10]) +
			int32(int8(b[16]))*int32(y[14]) +
			int32(int8(b[20]))*int32(y[18]) +
			int32(int8(b[24]))*int32(y[22]) +
			int32(int8(b[28]))*int32(y[26]) +
			int32(int8(b[32]))*int32(y[30])
		s3 := int32(int8(b[5]))*int32(y[3]) +
			int32(int8(b[9]))*int32(y[7]) +
			int32(int8(b[13]))*int32(y[11]) +
			int32(int8(b[17]))*int32(y[15]) +
			int32(int8(b[21]))*int32(y[19]) +
			int32(int8(b[25]))*int32(y[23]) +
			int32(int8(b[29]))*int32(y[27]) +
			int32(int8(b[33]))*int32(y[31])
		sumf += float32(float32(s0+s1+s2+s3) * float32(f16le(b[0:])*d[i]))
	}
	return sumf
}
