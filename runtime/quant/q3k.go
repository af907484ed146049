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

// dotQ3K is ggml_vec_dot_q3_K_q8_K_generic.
func dotQ3K(row []byte, a *actView) float32 {
	nb := len(a.d)
	qs := a.qs[:nb*256]
	row = row[:nb*110]
	var sums [8]float32
	var aux [256]int8
	for i, yd := range a.d {
		b := (*[110]byte)(row[i*110:])
		q3Block(b, &aux)
		sc := q3Scales((*[12]byte)(b[96:]))
		var acc [8]int32
		lanes16(&acc, &aux, (*[256]int8)(qs[i*256:]), &sc)
		d := f16le(b[108:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(acc[l]))
		}
	}
	return sumLanes(0, &sums)
}

// lanes16 accumulates sc[j]*a[p]*y[p] over a block into lane p%8, with one
// scale per 16 weights.
func lanes16(acc *[8]int32, a, y *[256]int8, sc *[16]int32) {
	for j := 0; j < 16; j++ {
		s := sc[j]
		for l := 0; l < 8; l++ {
			p := 16*j + l
			acc[l] += s * (int32(a[p])*int32(y[p]) + int32(a[p+8])*int32(y[p+8]))
		}
	}
}
