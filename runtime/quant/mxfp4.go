package quant

import "math"

// MXFP4 block (17 bytes, 32 elements): an E8M0 scale byte e, then 16 bytes
// whose low nibbles are elements 0..15 and high nibbles elements 16..31.
// A nibble indexes kvaluesMXFP4, the E2M1 values doubled so they are
// integers; the scale is halved to match (e8m0Half), so x = kv[q]·2^(e-128).
// gpt-oss ships its experts this way (ggml type 39).

var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is 2^(e-127)/2 as ggml's ggml_e8m0_to_fp32_half builds it: the
// exponent bits directly, with e 0 and 1 as the denormals 2^-128 and 2^-127.
func e8m0Half(e byte) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

func dequantMXFP4(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[17]byte)(src[i*17:])
		y := (*[32]float32)(dst[i*32:])
		d := e8m0Half(b[0])
		for j := 0; j < 16; j++ {
			y[j] = float32(kvaluesMXFP4[b[1+j]&15]) * d
			y[j+16] = float32(kvaluesMXFP4[b[1+j]>>4]) * d
		}
	}
}

// dotMXFP4 is ggml_vec_dot_mxfp4_q8_0's generic form: per block the exact
// integer sum of table values times the activation's int8s, scaled by the
// activation's fp16 d times the halved E8M0 scale, added in block order.
func dotMXFP4(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, qs := a.d[:nb], a.qs[:nb*32]
	row = row[:nb*17]
	var sumf float32
	for i := range d {
		b := (*[17]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[17:], qs[32:]
		var s1, s2 int32
		for j := 0; j < 16; j++ {
			s1 += int32(y[j]) * int32(kvaluesMXFP4[b[1+j]&15])
			s2 += int32(y[j+16]) * int32(kvaluesMXFP4[b[1+j]>>4])
		}
		sumf += float32(d[i]*e8m0Half(b[0])) * float32(s1+s2)
	}
	return sumf
}

// quantizeMXFP4 is quantize_row_mxfp4_ref: the scale exponent from the
// block's largest magnitude (so that it lands in the table's top octave),
// then each value's nearest table entry, the first of equals.
func quantizeMXFP4(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[17]byte)(dst[i*17:])
		amax := absMaxMagnitude(x[:])
		var e byte
		if amax > 0 {
			e = byte(int(math.Floor(math.Log2(float64(amax)))) - 2 + 127)
		}
		d := e8m0Half(e)
		b[0] = e
		for j := 0; j < 16; j++ {
			b[1+j] = nearestMXFP4(x[j], d) | nearestMXFP4(x[j+16], d)<<4
		}
	}
}

func absMaxMagnitude(x []float32) float32 {
	var m float32
	for _, v := range x {
		m = max(m, float32(math.Abs(float64(v))))
	}
	return m
}

func nearestMXFP4(x, d float32) byte {
	best, bestErr := 0, float32(math.Abs(float64(float32(kvaluesMXFP4[0])*d-x)))
	for i := 1; i < 16; i++ {
		if err := float32(math.Abs(float64(float32(kvaluesMXFP4[i])*d - x))); err < bestErr {
			best, bestErr = i, err
		}
	}
	return byte(best)
}
