package quant

import (
	"encoding/binary"
	"math"
)

// F32, F16 and BF16 rows are little-endian arrays. ggml's generic dot
// products multiply in float32 (exact for fp16 and bf16 operands) and sum in
// double, sequentially; the kernels keep that order.

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

// dotF32 is ggml_vec_dot_f32 without SIMD.
func dotF32(row []byte, a *actView) float32 {
	x := a.f
	row = row[:4*len(x)]
	var sum float64
	for i, v := range x {
		w := math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
		sum += float64(float32(w * v))
	}
	return float32(sum)
}

// dotF16 is ggml_vec_dot_f16 without SIMD; a.f is x rounded to fp16.
func dotF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	var sum float64
	for i, v := range x {
		sum += float64(f16tab[binary.LittleEndian.Uint16(row[2*i:])] * v)
	}
	return float32(sum)
}

// dotBF16 is ggml_vec_dot_bf16 without SIMD; a.f is x rounded to bf16.
func dotBF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	var sum float64
	for i, v := range x {
		sum += float64(BF16ToFP32(binary.LittleEndian.Uint16(row[2*i:])) * v)
	}
	return float32(sum)
}
