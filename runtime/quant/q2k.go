package quant

// Q2_K block (84 bytes): 16 scale bytes (low nibble: scale, high nibble: min
// of each 16 weights), 64 bytes of 2-bit quants, fp16 d, fp16 dmin.
// x = d*scale*q - dmin*min. In each 128-weight half, byte l holds weights
// l, l+32, l+64, l+96 at bit offsets 0, 2, 4, 6.

func dequantQ2K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[84]byte)(src[i*84:])
		y := (*[256]float32)(dst[i*256:])
		d, min := f16le(b[80:]), f16le(b[82:])
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(b[16+32*n:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				for h := 0; h < 2; h++ {
					sc := b[8*n+2*j+h]
					dl, ml := float32(d*float32(sc&15)), float32(min*float32(sc>>4))
					out := y[128*n+32*j+16*h:]
					for l := 0; l < 16; l++ {
						out[l] = float32(dl*float32(q[16*h+l]>>shift&3)) - ml
					}
				}
			}
		}
	}
}

// dotQ2K is ggml_vec_dot_q2_K_q8_K_generic.
func dotQ2K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*84], a.py[:nb*64], a.sums[:nb*16]
	var sumf float32
	for _, yd := range a.d {
		b := (*[84]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[84:], py[64:], bsums[16:]
		var summs int32
		for j := 0; j < 16; j++ {
			summs += bs[j] * int32(b[j]>>4)
		}
		var isum int32
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(b[16+32*n:])
			sc := (*[8]byte)(b[8*n:])
			yh := (*[32]uint64)(y[32*n:])
			w0, w1, w2, w3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
			for j := 0; j < 4; j++ {
				s := uint(2*j) & 63
				yj := (*[8]uint64)(yh[8*j:])
				s0 := lane3((w0>>s&lane2)*yj[0] + (w0>>(s+8)&lane2)*yj[1] + (w1>>s&lane2)*yj[2] + (w1>>(s+8)&lane2)*yj[3])
				s1 := lane3((w2>>s&lane2)*yj[4] + (w2>>(s+8)&lane2)*yj[5] + (w3>>s&lane2)*yj[6] + (w3>>(s+8)&lane2)*yj[7])
				isum += int32(sc[2*j]&15)*s0 + int32(sc[2*j+1]&15)*s1
			}
		}
		dall, dmin := yd*f16le(b[80:82]), yd*f16le(b[82:84])
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}
