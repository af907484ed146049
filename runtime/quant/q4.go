package quant

import "encoding/binary"

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

// nib4 returns sum_i q_i*(y_i+128) over the 16 nibbles of one uint64 pair
// half (w holds 8 bytes = 16 weights) against its four packed words, and the
// lane-summed nibbles.
func nib4(w uint64, y *[8]uint64, g int) (s uint64, t uint64) {
	e, o := w&lane16, w>>8&lane16
	he, ho := w>>4&lane16, w>>12&lane16
	p := e*y[g] + o*y[g+1] + he*y[g+2] + ho*y[g+3]
	return p >> 48, e + o + he + ho
}

// sumQ4 returns sum_j q_j*y_j for a block's 16 nibble bytes.
func sumQ4(qs []byte, y *[8]uint64) int32 {
	w0 := binary.LittleEndian.Uint64(qs[0:8])
	w1 := binary.LittleEndian.Uint64(qs[8:16])
	s0, t0 := nib4(w0, y, 0)
	s1, t1 := nib4(w1, y, 4)
	sq := ((t0 + t1) * ones16) >> 48
	return int32(s0+s1) - 128*int32(sq)
}

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0_generic.
func dotQ4_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, sums, py := a.d[:nb], a.sums[:nb], a.py[:nb*8]
	row = row[:nb*18]
	var sumf float32
	for i := range d {
		b := (*[18]byte)(row[i*18:])
		sumi := sumQ4(b[2:18], (*[8]uint64)(py[i*8:])) - 8*sums[i]
		sumf += float32(float32(float32(sumi)*f16le(b[0:])) * d[i])
	}
	return sumf
}

// dotQ4_1 is ggml_vec_dot_q4_1_q8_1_generic.
func dotQ4_1(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, s, py := a.d[:nb], a.s[:nb], a.py[:nb*8]
	row = row[:nb*20]
	var sumf float32
	for i := range d {
		b := (*[20]byte)(row[i*20:])
		sumi := sumQ4(b[4:20], (*[8]uint64)(py[i*8:]))
		sumf += float32(float32(f16le(b[0:])*d[i])*float32(sumi)) + float32(f16le(b[2:])*s[i])
	}
	return sumf
}
