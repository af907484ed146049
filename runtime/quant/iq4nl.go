package quant

import (
	"encoding/binary"
	"math"
)

// IQ4_NL block (18 bytes, 32 elements): an f16 scale d, then 16 bytes
// whose low nibbles are elements 0..15 and high nibbles elements 16..31.
// A nibble indexes kvaluesIQ4NL, a fixed non-linear table, so x = d·kv[q]
// (ggml-common.h block_iq4_nl, kvalues_iq4nl). Here it is a KV cache type
// only (llama.cpp's -ctk/-ctv iq4_nl): ggml's table does not list it as a
// weight type any backend computes with.

var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// dequantIQ4NL is dequantize_row_iq4_nl.
func dequantIQ4NL(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[18]byte)(src[i*18:])
		y := (*[32]float32)(dst[i*32:])
		d := f16le(b[0:])
		for j := 0; j < 16; j++ {
			y[j] = d * float32(kvaluesIQ4NL[b[2+j]&15])
			y[j+16] = d * float32(kvaluesIQ4NL[b[2+j]>>4])
		}
	}
}

// dotIQ4NL is ggml_vec_dot_iq4_nl_q8_0's generic form: per block the
// exact integer sum of table values times the activation's int8s, scaled
// by the activation's f16 d times the block's, added in block order.
func dotIQ4NL(row []byte, a *actView) float32 {
	nb := len(a.d)
	d, qs := a.d[:nb], a.qs[:nb*32]
	row = row[:nb*18]
	var sumf float32
	for i := range d {
		b := (*[18]byte)(row)
		y := (*[32]int8)(qs)
		row, qs = row[18:], qs[32:]
		var s1, s2 int32
		for j := 0; j < 16; j++ {
			s1 += int32(y[j]) * int32(kvaluesIQ4NL[b[2+j]&15])
			s2 += int32(y[j+16]) * int32(kvaluesIQ4NL[b[2+j]>>4])
		}
		sumf += float32(d[i]*f16le(b[0:2])) * float32(s1+s2)
	}
	return sumf
}

// quantizeIQ4NL is quantize_row_iq4_nl_ref, what ggml-cpu's from_float
// writes an iq4_nl KV cache row with: quantize_row_iq4_nl_impl with no
// importance weights and ntry -1, so no scale search and no second pass —
// each value's nearest table entry at d = max/-127 (max the value of
// largest magnitude, the first of equals), then the block's scale the
// least-squares fit Σw·q·x / Σw·q² over those entries with weights x²,
// stored in f16. A block whose magnitudes are all below 1e-15 gets scale 0
// (ggml leaves its nibbles as the previous block left them; here they are
// zero, which decodes the same).
func quantizeIQ4NL(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[18]byte)(dst[i*18:])
		var amax, mx float32
		for _, v := range x {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, mx = a, v
			}
		}
		clear(b[:])
		if amax < 1e-15 {
			continue
		}
		id := 1 / (mx / float32(kvaluesIQ4NL[0]))
		var l [32]byte
		var sumqx, sumq2 float32
		for j, v := range x {
			l[j] = bestIndexIQ4NL(float32(id * v))
			q := float32(kvaluesIQ4NL[l[j]])
			w := float32(v * v)
			sumqx += float32(float32(w*q) * v)
			sumq2 += float32(float32(w*q) * q)
		}
		binary.LittleEndian.PutUint16(b[0:], FP32ToFP16(sumqx/sumq2))
		for j := 0; j < 16; j++ {
			b[2+j] = l[j] | l[j+16]<<4
		}
	}
}

// bestIndexIQ4NL is best_index_int8 over kvaluesIQ4NL: the nearest entry
// to x, the upper of two equally near.
func bestIndexIQ4NL(x float32) byte {
	val := &kvaluesIQ4NL
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return byte(mu - 1)
	}
	return byte(mu)
}
