package quant

// Q3_K block (110 bytes): 32 bytes hmask, 64 bytes of 2-bit quants, 12
// bytes of 6-bit scales, fp16 d. Weight p = 128n + 32j + l (l < 32) takes
// bits 2j of qs[32n+l] and bit 4n+j of hmask[l]; a clear hmask bit means -4.
// x = d*(scale-32)*q.

// q3Block decodes one block's quants to ggml's aux8 form (values -4..3).
func q3Block(b *[110]byte, a *[256]int8) {
	for n := 0; n < 2; n++ {
		q := (*[32]byte)(b[32+32*n:])
		for j := 0; j < 4; j++ {
			shift := uint(2 * j)
			m := byte(1) << (4*n + j)
			out := (*[32]int8)(a[128*n+32*j:])
			for l := 0; l < 32; l++ {
				v := int8(q[l] >> shift & 3)
				if b[l]&m == 0 {
					v -= 4
				}
				out[l] = v
			}
		}
	}
}

func dequantQ3K(src []byte, dst []float32) {
	var a [256]int8
	for i := 0; i < len(dst)/256; i++ {
		b := (*[110]byte)(src[i*110:])
		y := (*[256]float32)(dst[i*256:])
		q3Block(b, &a)
		sc := q3Scales((*[12]byte)(b[96:]))
		d := f16le(b[108:])
		for j := 0; j < 16; j++ {
			dl := float32(d * float32(sc[j]))
			for l := 0; l < 16; l++ {
				y[16*j+l] = dl * float32(a[16*j+l])
			}
		}
	}
}

// q3k returns the 3-bit weights (0..7, ggml's value + 4) at bit offset s of
// 8 consecutive quant bytes w, with their hmask bit hs taken from hw, split
// into even and odd lanes.
func q3k(w, hw uint64, s, hs uint) (ev, od uint64) {
	return w>>(s&63)&lane2 | (hw>>(hs&63)&ones16)<<2, w>>((s+8)&63)&lane2 | (hw>>((hs+8)&63)&ones16)<<2
}

// dotQ3K is ggml_vec_dot_q3_K_q8_K_generic (see dotQ4K): sum (q-4)*y =
// sum q*y - 4*bsum per 16 weights.
func dotQ3K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*110], a.py[:nb*64], a.sums[:nb*16]
	var sumf float32
	for _, yd := range a.d {
		b := (*[110]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[110:], py[64:], bsums[16:]
		sc := q3Scales((*[12]byte)(b[96:108]))
		h0, h1, h2, h3 := le64(b[0:8]), le64(b[8:16]), le64(b[16:24]), le64(b[24:32])
		var isum int32
		for j := 0; j < 16; j++ {
			isum -= 4 * sc[j] * bs[j]
		}
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(b[32+32*n:])
			yh := (*[32]uint64)(y[32*n:])
			w0, w1, w2, w3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
			for j := 0; j < 4; j++ {
				s, hs := uint(2*j), uint(4*n+j)
				yj := (*[8]uint64)(yh[8*j:])
				e0, o0 := q3k(w0, h0, s, hs)
				e1, o1 := q3k(w1, h1, s, hs)
				e2, o2 := q3k(w2, h2, s, hs)
				e3, o3 := q3k(w3, h3, s, hs)
				s0 := lane3(e0*yj[0] + o0*yj[1] + e1*yj[2] + o1*yj[3])
				s1 := lane3(e2*yj[4] + o2*yj[5] + e3*yj[6] + o3*yj[7])
				isum += sc[8*n+2*j]*s0 + sc[8*n+2*j+1]*s1
			}
		}
		sumf += float32(f16le(b[108:110]) * yd * float32(isum))
	}
	return sumf
}
