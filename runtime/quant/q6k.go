package quant

// Q6_K block (210 bytes): 128 bytes ql (low nibbles), 64 bytes qh (two bits
// each), 16 int8 scales, fp16 d. In 128-weight half h, for l < 32, weights
// 128h+l, +32, +64, +96 are the low nibble of ql[64h+l], of ql[64h+l+32],
// the high nibble of ql[64h+l], of ql[64h+l+32], topped by bits 0-1, 2-3,
// 4-5, 6-7 of qh[32h+l]. x = d*scale*(q-32), one scale per 16 weights.

// q6Block decodes one block's quants to ggml's aux8 form (values -32..31).
func q6Block(b *[210]byte, a *[256]int8) {
	for h := 0; h < 2; h++ {
		ql := (*[64]byte)(b[64*h:])
		qh := (*[32]byte)(b[128+32*h:])
		out := (*[128]int8)(a[128*h:])
		for l := 0; l < 32; l++ {
			out[l] = int8(ql[l]&15|qh[l]&3<<4) - 32
			out[l+32] = int8(ql[l+32]&15|qh[l]>>2&3<<4) - 32
			out[l+64] = int8(ql[l]>>4|qh[l]>>4&3<<4) - 32
			out[l+96] = int8(ql[l+32]>>4|qh[l]>>6&3<<4) - 32
		}
	}
}

func dequantQ6K(src []byte, dst []float32) {
	var a [256]int8
	for i := 0; i < len(dst)/256; i++ {
		b := (*[210]byte)(src[i*210:])
		y := (*[256]float32)(dst[i*256:])
		q6Block(b, &a)
		d := f16le(b[208:])
		for j := 0; j < 16; j++ {
			ds := float32(d * float32(int8(b[192+j])))
			for l := 0; l < 16; l++ {
				y[16*j+l] = ds * float32(a[16*j+l])
			}
		}
	}
}

// dotQ6K is ggml_vec_dot_q6_K_q8_K_generic (see dotQ4K): sum (q-32)*y =
// sum q*y - 32*bsum per 16 weights. 6-bit lanes allow one product per read.
func dotQ6K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*210], a.py[:nb*64], a.sums[:nb*16]
	var sumf float32
	for _, yd := range a.d {
		b := (*[210]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[210:], py[64:], bsums[16:]
		var isum int32
		for j := 0; j < 16; j++ {
			isum -= 32 * int32(int8(b[192+j])) * bs[j]
		}
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[128+32*h:])
			sc := (*[8]byte)(b[192+8*h:])
			yh := (*[32]uint64)(y[32*h:])
			for k := 0; k < 4; k++ {
				wl0, wl1, hw := le64(ql[8*k:8*k+8]), le64(ql[32+8*k:40+8*k]), le64(qh[8*k:8*k+8])
				yk := yh[2*k:]
				p0 := lane3((wl0&lane4|(hw&lane2)<<4)*yk[0]) + lane3((wl0>>8&lane4|(hw>>8&lane2)<<4)*yk[1])
				p1 := lane3((wl1&lane4|(hw>>2&lane2)<<4)*yk[8]) + lane3((wl1>>8&lane4|(hw>>10&lane2)<<4)*yk[9])
				p2 := lane3((wl0>>4&lane4|(hw>>4&lane2)<<4)*yk[16]) + lane3((wl0>>12&lane4|(hw>>12&lane2)<<4)*yk[17])
				p3 := lane3((wl1>>4&lane4|(hw>>6&lane2)<<4)*yk[24]) + lane3((wl1>>12&lane4|(hw>>14&lane2)<<4)*yk[25])
				j := k >> 1
				isum += int32(int8(sc[j]))*p0 + int32(int8(sc[2+j]))*p1 + int32(int8(sc[4+j]))*p2 + int32(int8(sc[6+j]))*p3
			}
		}
		sumf += float32(f16le(b[208:210]) * yd * float32(isum))
	}
	return sumf
}
