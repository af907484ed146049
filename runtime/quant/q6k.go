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

// dotQ6K is ggml_vec_dot_q6_K_q8_K_generic.
func dotQ6K(row []byte, a *actView) float32 {
	nb := len(a.d)
	qs := a.qs[:nb*256]
	row = row[:nb*210]
	var sums [8]float32
	var aux [256]int8
	for i, yd := range a.d {
		b := (*[210]byte)(row[i*210:])
		q6Block(b, &aux)
		var sc [16]int32
		for j := range sc {
			sc[j] = int32(int8(b[192+j]))
		}
		var acc [8]int32
		lanes16(&acc, &aux, (*[256]int8)(qs[i*256:]), &sc)
		d := f16le(b[208:]) * yd
		for l := range sums {
			sums[l] += float32(d * float32(acc[l]))
		}
	}
	return sumLanes(0, &sums)
}
