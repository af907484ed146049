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

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0 as ggml-cpu's x86 AVX2 build computes
// it, the order llama.cpp's references were made in (its generic kernel
// rounds differently): per block, the products summed in eight lanes of
// four consecutive elements, each lane's integer times dx·dy added to its
// own float32 lane with one FMA, and the lanes reduced at the end as
// hsum_float_8 does. Summed block by block instead, the results differ
// by an ulp now and then, enough to move an F16 rounding of a later query
// or cache value (synth-granitehybrid-Q4_K_M's attention K/V products).
func dotQ8_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, qs := a.d[:nb], a.qs[:nb*32]
	row = row[:nb*34]
	var acc [8]float32
	for i := range d {
		// Advancing the slices, rather than indexing from their start,
		// keeps each block's base in one register so the byte loads fold
		// their constant offsets.
		b := (*[34]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[34:], qs[32:]
		dd := f16le(b[0:]) * d[i]
		for t := range acc {
			o := 4 * t
			s := int32(int8(b[2+o]))*int32(y[o]) + int32(int8(b[3+o]))*int32(y[o+1]) +
				int32(int8(b[4+o]))*int32(y[o+2]) + int32(int8(b[5+o]))*int32(y[o+3])
			acc[t] = FMA32(dd, float32(s), acc[t])
		}
	}
	return hsum8(&acc)
}

// hsum8 is ggml's hsum_float_8: the upper four lanes added to the lower,
// then lanes 0+2 and 1+3, then those two.
func hsum8(a *[8]float32) float32 {
	return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}
