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

// The K-quant kernels compute exactly ggml's integer sums. ggml's generic
// code spreads each super-block's sum over eight float lanes by position
// modulo 8 and adds the lanes at the end; packing weights into words mixes
// positions, so here each super-block's integer sum is scaled and added
// directly, as ggml's generic Q2_K kernel does. The float results differ
// from the generic kernel's only in rounding (about 1e-7 relative), the same
// order by which ggml's own SIMD kernels differ from it.

// dotQ4K is ggml_vec_dot_q4_K_q8_K_generic (but see above).
func dotQ4K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*144], a.py[:nb*64], a.sums[:nb*16]
	var sumf float32
	for _, yd := range a.d {
		b := (*[144]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[144:], py[64:], bsums[16:]
		sc, mn := k4Scales((*[12]byte)(b[4:16]))
		var isum int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			yc := (*[16]uint64)(y[16*c:])
			w0, w1, w2, w3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
			lo := lane3((w0&lane4)*yc[0]+(w0>>8&lane4)*yc[1]+(w1&lane4)*yc[2]+(w1>>8&lane4)*yc[3]) +
				lane3((w2&lane4)*yc[4]+(w2>>8&lane4)*yc[5]+(w3&lane4)*yc[6]+(w3>>8&lane4)*yc[7])
			hi := lane3((w0>>4&lane4)*yc[8]+(w0>>12&lane4)*yc[9]+(w1>>4&lane4)*yc[10]+(w1>>12&lane4)*yc[11]) +
				lane3((w2>>4&lane4)*yc[12]+(w2>>12&lane4)*yc[13]+(w3>>4&lane4)*yc[14]+(w3>>12&lane4)*yc[15])
			isum += int32(sc[2*c])*lo + int32(sc[2*c+1])*hi
		}
		d, dmin := f16le(b[0:2])*yd, f16le(b[2:4])*yd
		sumf += float32(d*float32(isum)) - float32(dmin*float32(minSum(bs, &mn)))
	}
	return sumf
}

// q5k returns the 5-bit weights of one nibble word: the low (lo) or high
// (hi) nibbles of 8 consecutive quant bytes, topped by bit s of the
// matching qh bytes (hw), split into even and odd lanes.
func q5k(w, hw uint64, s uint) (ev, od uint64) {
	return w&lane4 | (hw>>(s&63)&ones16)<<4, w>>8&lane4 | (hw>>((s+8)&63)&ones16)<<4
}

// dotQ5K is ggml_vec_dot_q5_K_q8_K_generic (see dotQ4K).
func dotQ5K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*176], a.py[:nb*64], a.sums[:nb*16]
	var sumf float32
	for _, yd := range a.d {
		b := (*[176]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[176:], py[64:], bsums[16:]
		sc, mn := k4Scales((*[12]byte)(b[4:16]))
		h0, h1, h2, h3 := le64(b[16:24]), le64(b[24:32]), le64(b[32:40]), le64(b[40:48])
		var isum int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			yc := (*[16]uint64)(y[16*c:])
			w0, w1, w2, w3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
			s := uint(2 * c)
			e0, o0 := q5k(w0, h0, s)
			e1, o1 := q5k(w1, h1, s)
			e2, o2 := q5k(w2, h2, s)
			e3, o3 := q5k(w3, h3, s)
			lo := lane3(e0*yc[0]+o0*yc[1]) + lane3(e1*yc[2]+o1*yc[3]) + lane3(e2*yc[4]+o2*yc[5]) + lane3(e3*yc[6]+o3*yc[7])
			e0, o0 = q5k(w0>>4, h0, s+1)
			e1, o1 = q5k(w1>>4, h1, s+1)
			e2, o2 = q5k(w2>>4, h2, s+1)
			e3, o3 = q5k(w3>>4, h3, s+1)
			hi := lane3(e0*yc[8]+o0*yc[9]) + lane3(e1*yc[10]+o1*yc[11]) + lane3(e2*yc[12]+o2*yc[13]) + lane3(e3*yc[14]+o3*yc[15])
			isum += int32(sc[2*c])*lo + int32(sc[2*c+1])*hi
		}
		d, dmin := f16le(b[0:2])*yd, f16le(b[2:4])*yd
		sumf += float32(d*float32(isum)) - float32(dmin*float32(minSum(bs, &mn)))
	}
	return sumf
}
