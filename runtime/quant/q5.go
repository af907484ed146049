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

// nib5 is nib4 with the fifth bits added from two qh bytes: lo covers the
// eight low-nibble weights of w, hi the eight high-nibble ones. Two products
// are summed per lane read so that 5-bit lanes cannot overflow.
func nib5(w uint64, lo, hi byte, y *[8]uint64, g int) (s uint64, t uint64) {
	e, o := w&lane16|hbEven[lo], w>>8&lane16|hbOdd[lo]
	he, ho := w>>4&lane16|hbEven[hi], w>>12&lane16|hbOdd[hi]
	s = (e*y[g]+o*y[g+1])>>48 + (he*y[g+2]+ho*y[g+3])>>48
	return s, e + o + he + ho
}

// sumQ5 returns sum_j q_j*y_j, q the 5-bit values of a block.
func sumQ5(qh, qs []byte, y *[8]uint64) int32 {
	w0 := binary.LittleEndian.Uint64(qs[0:8])
	w1 := binary.LittleEndian.Uint64(qs[8:16])
	_ = qh[3]
	s0, t0 := nib5(w0, qh[0], qh[2], y, 0)
	s1, t1 := nib5(w1, qh[1], qh[3], y, 4)
	sq := ((t0 + t1) * ones16) >> 48
	return int32(s0+s1) - 128*int32(sq)
}

// dotQ5_0 is ggml_vec_dot_q5_0_q8_0_generic.
func dotQ5_0(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, sums, py := a.d[:nb], a.sums[:nb], a.py[:nb*8]
	row = row[:nb*22]
	var sumf float32
	for i := range d {
		b := (*[22]byte)(row[i*22:])
		sumi := sumQ5(b[2:6], b[6:22], (*[8]uint64)(py[i*8:])) - 16*sums[i]
		sumf += float32(float32(f16le(b[0:])*d[i]) * float32(sumi))
	}
	return sumf
}

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1_generic.
func dotQ5_1(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, s, py := a.d[:nb], a.s[:nb], a.py[:nb*8]
	row = row[:nb*24]
	var sumf float32
	for i := range d {
		b := (*[24]byte)(row[i*24:])
		sumi := sumQ5(b[4:8], b[8:24], (*[8]uint64)(py[i*8:]))
		sumf += float32(float32(f16le(b[0:])*d[i])*float32(sumi)) + float32(f16le(b[2:])*s[i])
	}
	return sumf
}
