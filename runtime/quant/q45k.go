package quant

// Q4_K block (144 bytes): fp16 d, fp16 dmin, 12 bytes of 6-bit scales and
// mins (k4Scales), 128 nibble bytes. In each 64-weight chunk c, byte l of
// qs[32c:] holds weight 64c+l in its low nibble and 64c+32+l in its high one.
// x = d*scale*q - dmin*min, one scale and min per 32 weights.
// Q5_K block (176 bytes): d, dmin, scales as Q4_K, 32 bytes qh, 128 nibble
// bytes; bit s of qh[l] is the fifth bit of weight 32s+l.

func dequantQ4K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[144]byte)(src[i*144:])
		y := (*[256]float32)(dst[i*256:])
		d, min := f16le(b[0:]), f16le(b[2:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			d1, m1 := float32(d*float32(sc[2*c])), float32(min*float32(mn[2*c]))
			d2, m2 := float32(d*float32(sc[2*c+1])), float32(min*float32(mn[2*c+1]))
			for l := 0; l < 32; l++ {
				y[64*c+l] = float32(d1*float32(q[l]&15)) - m1
				y[64*c+32+l] = float32(d2*float32(q[l]>>4)) - m2
			}
		}
	}
}

func dequantQ5K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[176]byte)(src[i*176:])
		y := (*[256]float32)(dst[i*256:])
		d, min := f16le(b[0:]), f16le(b[2:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		qh := (*[32]byte)(b[16:])
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			d1, m1 := float32(d*float32(sc[2*c])), float32(min*float32(mn[2*c]))
			d2, m2 := float32(d*float32(sc[2*c+1])), float32(min*float32(mn[2*c+1]))
			for l := 0; l < 32; l++ {
				v1 := q[l]&15 | qh[l]>>(2*c)&1<<4
				v2 := q[l]>>4 | qh[l]>>(2*c+1)&1<<4
				y[64*c+l] = float32(d1*float32(v1)) - m1
				y[64*c+32+l] = float32(d2*float32(v2)) - m2
			}
		}
	}
}

// minSum is sum_j bsums[j]*min[j/2], the integer that carries the mins.
func minSum(bs *[16]int32, mn *[8]uint8) int32 {
	var s int32
	for j := 0; j < 16; j++ {
		s += bs[j] * int32(mn[j/2])
	}
	return s
}

// dotQ4K is ggml_vec_dot_q4_K_q8_K_generic.
func dotQ4K(row []byte, a *actView) float32 {
	nb := len(a.d)
	qs, bsums := a.qs[:nb*256], a.sums[:nb*16]
	row = row[:nb*144]
	var sums [8]float32
	var sumf float32
	for i, yd := range a.d {
		b := (*[144]byte)(row[i*144:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		var acc [8]int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			y := (*[64]int8)(qs[i*256+64*c:])
			s1, s2 := int32(sc[2*c]), int32(sc[2*c+1])
			for l := 0; l < 8; l++ {
				lo := int32(q[l]&15)*int32(y[l]) + int32(q[l+8]&15)*int32(y[l+8]) +
					int32(q[l+16]&15)*int32(y[l+16]) + int32(q[l+24]&15)*int32(y[l+24])
				hi := int32(q[l]>>4)*int32(y[l+32]) + int32(q[l+8]>>4)*int32(y[l+40]) +
					int32(q[l+16]>>4)*int32(y[l+48]) + int32(q[l+24]>>4)*int32(y[l+56])
				acc[l] += s1*lo + s2*hi
			}
		}
		d := f16le(b[0:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(acc[l]))
		}
		dmin := f16le(b[2:]) * yd
		sumf -= float32(dmin * float32(minSum((*[16]int32)(bsums[i*16:]), &mn)))
	}
	return sumLanes(sumf, &sums)
}

// dotQ5K is ggml_vec_dot_q5_K_q8_K_generic.
func dotQ5K(row []byte, a *actView) float32 {
	nb := len(a.d)
	qs, bsums := a.qs[:nb*256], a.sums[:nb*16]
	row = row[:nb*176]
	var sums [8]float32
	var sumf float32
	for i, yd := range a.d {
		b := (*[176]byte)(row[i*176:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		qh := (*[32]byte)(b[16:])
		var acc [8]int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			y := (*[64]int8)(qs[i*256+64*c:])
			s1, s2 := int32(sc[2*c]), int32(sc[2*c+1])
			sh1, sh2 := uint(2*c), uint(2*c+1)
			for l := 0; l < 8; l++ {
				var lo, hi int32
				for k := l; k < 32; k += 8 {
					lo += int32(q[k]&15|qh[k]>>sh1&1<<4) * int32(y[k])
					hi += int32(q[k]>>4|qh[k]>>sh2&1<<4) * int32(y[k+32])
				}
				acc[l] += s1*lo + s2*hi
			}
		}
		d := f16le(b[0:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(acc[l]))
		}
		dmin := f16le(b[2:]) * yd
		sumf -= float32(dmin * float32(minSum((*[16]int32)(bsums[i*16:]), &mn)))
	}
	return sumLanes(sumf, &sums)
}
