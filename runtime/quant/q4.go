package quant

// Q4_0 block (18 bytes): fp16 d, then 16 bytes whose low nibbles are
// elements 0..15 and high nibbles elements 16..31; x = (q-8)*d.
// Q4_1 block (20 bytes): fp16 d, fp16 m, 16 bytes as in Q4_0; x = q*d + m.

func dequantQ4_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[18]byte)(src[i*18:])
		y := (*[32]float32)(dst[i*32:])
		d := f16le(b[0:])
		for j := 0; j < 16; j++ {
			y[j] = float32(int32(b[2+j]&15)-8) * d
			y[j+16] = float32(int32(b[2+j]>>4)-8) * d
		}
	}
}

func dequantQ4_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[20]byte)(src[i*20:])
		y := (*[32]float32)(dst[i*32:])
		d, m := f16le(b[0:]), f16le(b[2:])
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(b[4+j]&15)*d) + m
			y[j+16] = float32(float32(b[4+j]>>4)*d) + m
		}
	}
}

// The loops below advance their slices instead of indexing from the start:
// with each block's base in one register, Go folds the constant offsets
// into the loads. The nibble sums are written out in each loop because a
// helper this size is not inlined, and the call would cost a measurable
// share (docs/benchmarks.md, "quant: the portable kernels' loop shapes").

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0_generic: sum (q-8)*y = sum q*y - 8*sum y.
func dotQ4_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, sums, py := a.d[:nb], a.sums[:nb], a.py[:nb*8]
	row = row[:nb*18]
	var sumf float32
	for i := range d {
		b := (*[18]byte)(row)
		y := (*[8]uint64)(py)
		row, py = row[18:], py[8:]
		w0, w1 := le64(b[2:10]), le64(b[10:18])
		sumi := lane3((w0&lane4)*y[0]+(w0>>8&lane4)*y[1]+(w0>>4&lane4)*y[4]+(w0>>12&lane4)*y[5]) +
			lane3((w1&lane4)*y[2]+(w1>>8&lane4)*y[3]+(w1>>4&lane4)*y[6]+(w1>>12&lane4)*y[7])
		sumi -= 8 * sums[i]
		sumf += float32(float32(float32(sumi)*f16le(b[0:2])) * d[i])
	}
	return sumf
}

// dotQ4_1 is ggml_vec_dot_q4_1_q8_1 as ggml-cpu's x86 AVX2 build computes
// it (see dotQ8_0): per block, q*y summed in eight lanes of four
// consecutive elements, each lane's integer times dx·dy added to its own
// float32 lane with one FMA, beside summs += m·s (one FMA, as GCC
// contracts it); at the end hsum_float_8 plus summs.
func dotQ4_1(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, s, qs := a.d[:nb], a.s[:nb], a.qs[:nb*32]
	row = row[:nb*20]
	var acc [8]float32
	var summs float32
	for i := range d {
		b := (*[20]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[20:], qs[32:]
		summs = FMA32(f16le(b[2:4]), s[i], summs)
		dd := f16le(b[0:2]) * d[i]
		for t := range acc {
			var sum int32
			for e := 4 * t; e < 4*t+4; e++ {
				q := int32(b[4+e%16]) >> (4 * (e / 16)) & 15
				sum += q * int32(y[e])
			}
			acc[t] = FMA32(dd, float32(sum), acc[t])
		}
	}
	return hsum8(&acc) + summs
}
