package quant

import (
	"encoding/binary"
	"math"
)

// F32, F16 and BF16 rows are little-endian arrays. ggml's generic dot
// products multiply in float32 (exact for fp16 and bf16 operands) and sum in
// double. The kernels sum in four interleaved double chains instead of one:
// a single chain is bound by add latency and runs 3-4x slower. The double
// sums differ by reassociation only, far below float32 resolution, so the
// float32 result is the generic kernel's except, rarely, in the last bit.

func dequantF32(src []byte, dst []float32) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func dequantF16(src []byte, dst []float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = f16tab[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

func dequantBF16(src []byte, dst []float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// dotF32 is ggml_vec_dot_f32.
func dotF32(row []byte, a *actView) float32 {
	x := a.f
	row = row[:4*len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		w := (*[16]byte)(row)
		v := (*[4]float32)(x)
		row, x = row[16:], x[4:]
		s0 += float64(float32(math.Float32frombits(binary.LittleEndian.Uint32(w[0:4])) * v[0]))
		s1 += float64(float32(math.Float32frombits(binary.LittleEndian.Uint32(w[4:8])) * v[1]))
		s2 += float64(float32(math.Float32frombits(binary.LittleEndian.Uint32(w[8:12])) * v[2]))
		s3 += float64(float32(math.Float32frombits(binary.LittleEndian.Uint32(w[12:16])) * v[3]))
	}
	for i, xv := range x {
		s0 += float64(float32(math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:4*i+4])) * xv))
	}
	return float32((s0 + s1) + (s2 + s3))
}

// dotF16 is ggml_vec_dot_f16; a.f is x rounded to fp16.
func dotF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		w := (*[8]byte)(row)
		v := (*[4]float32)(x)
		row, x = row[8:], x[4:]
		s0 += float64(float32(f16tab[binary.LittleEndian.Uint16(w[0:2])] * v[0]))
		s1 += float64(float32(f16tab[binary.LittleEndian.Uint16(w[2:4])] * v[1]))
		s2 += float64(float32(f16tab[binary.LittleEndian.Uint16(w[4:6])] * v[2]))
		s3 += float64(float32(f16tab[binary.LittleEndian.Uint16(w[6:8])] * v[3]))
	}
	for i, xv := range x {
		s0 += float64(float32(f16tab[binary.LittleEndian.Uint16(row[2*i:2*i+2])] * xv))
	}
	return float32((s0 + s1) + (s2 + s3))
}

// dotBF16 is ggml_vec_dot_bf16; a.f is x rounded to bf16.
func dotBF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		w := (*[8]byte)(row)
		v := (*[4]float32)(x)
		row, x = row[8:], x[4:]
		s0 += float64(float32(BF16ToFP32(binary.LittleEndian.Uint16(w[0:2])) * v[0]))
		s1 += float64(float32(BF16ToFP32(binary.LittleEndian.Uint16(w[2:4])) * v[1]))
		s2 += float64(float32(BF16ToFP32(binary.LittleEndian.Uint16(w[4:6])) * v[2]))
		s3 += float64(float32(BF16ToFP32(binary.LittleEndian.Uint16(w[6:8])) * v[3]))
	}
	for i, xv := range x {
		s0 += float64(float32(BF16ToFP32(binary.LittleEndian.Uint16(row[2*i:2*i+2])) * xv))
	}
	return float32((s0 + s1) + (s2 + s3))
}
