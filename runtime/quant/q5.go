package quant

import "encoding/binary"

// Q5_0 block (22 bytes): fp16 d, 4 bytes qh (bit j is the fifth bit of
// element j), 16 nibble bytes as in Q4_0; x = (q-16)*d.
// Q5_1 block (24 bytes): fp16 d, fp16 m, qh, nibbles; x = q*d + m.

func dequantQ5_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[22]byte)(src[i*22:])
		y := (*[32]float32)(dst[i*32:])
		d := f16le(b[0:])
		qh := binary.LittleEndian.Uint32(b[2:6])
		for j := 0; j < 16; j++ {
			x0 := int32(b[6+j]&15|byte(qh>>j<<4)&0x10) - 16
			x1 := int32(b[6+j]>>4|byte(qh>>(j+12))&0x10) - 16
			y[j] = float32(x0) * d
			y[j+16] = float32(x1) * d
		}
	}
}

func dequantQ5_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[24]byte)(src[i*24:])
		y := (*[32]float32)(dst[i*32:])
		d, m := f16le(b[0:]), f16le(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:8])
		for j := 0; j < 16; j++ {
			x0 := b[8+j]&15 | byte(qh>>j<<4)&0x10
			x1 := b[8+j]>>4 | byte(qh>>(j+12))&0x10
			y[j] = float32(float32(x0)*d) + m
			y[j+16] = float32(float32(x1)*d) + m
		}
	}
}

// q5sum is q4sum for 5-bit weights, the fifth bits coming from qh (byte g
// covers weights 8g..8g+7). Two products per lane read keep 5-bit lanes
// from overflowing.
func q5sum(w0, w1 uint64, qh uint32, y *[8]uint64) int32 {
	h0, h1, h2, h3 := byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
	return lane3((w0&lane4|hbEven[h0])*y[0]+(w0>>8&lane4|hbOdd[h0])*y[1]) +
		lane3((w0>>4&lane4|hbEven[h2])*y[4]+(w0>>12&lane4|hbOdd[h2])*y[5]) +
		lane3((w1&lane4|hbEven[h1])*y[2]+(w1>>8&lane4|hbOdd[h1])*y[3]) +
		lane3((w1>>4&lane4|hbEven[h3])*y[6]+(w1>>12&lane4|hbOdd[h3])*y[7])
}

// dotQ5_0 is ggml_vec_dot_q5_0_q8_0 as ggml-cpu's x86 AVX2 build computes
// it (see dotQ8_0): per block, (q-16)*y summed in eight lanes of four
// consecutive elements, each lane's integer times dx·dy added to its own
// float32 lane with one FMA, hsum_float_8 at the end. Summed block by
// block instead, synth-deepseek2-Q4_K_M (whose narrow rows fall back to
// Q5_0) parted from llama.cpp at position 13 and flipped an expert at 30.
func dotQ5_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, qs := a.d[:nb], a.qs[:nb*32]
	row = row[:nb*22]
	var acc [8]float32
	for i := range d {
		b := (*[22]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[22:], qs[32:]
		qh := binary.LittleEndian.Uint32(b[2:6])
		dd := f16le(b[0:2]) * d[i]
		for t := range acc {
			var s int32
			for e := 4 * t; e < 4*t+4; e++ {
				q := int32(b[6+e%16]) >> (4 * (e / 16)) & 15
				q |= int32(qh>>uint(e)&1) << 4
				s += (q - 16) * int32(y[e])
			}
			acc[t] = FMA32(dd, float32(s), acc[t])
		}
	}
	return hsum8(&acc)
}

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1_generic.
func dotQ5_1(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, s, py := a.d[:nb], a.s[:nb], a.py[:nb*8]
	row = row[:nb*24]
	var sumf float32
	for i := range d {
		b := (*[24]byte)(row)
		y := (*[8]uint64)(py)
		row, py = row[24:], py[8:]
		sumi := q5sum(le64(b[8:16]), le64(b[16:24]), binary.LittleEndian.Uint32(b[4:8]), y)
		sumf += float32(float32(f16le(b[0:2])*d[i])*float32(sumi)) + float32(f16le(b[2:4])*s[i])
	}
	return sumf
}
