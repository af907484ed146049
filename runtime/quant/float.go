package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// F32, F16 and BF16 rows are little-endian arrays. F32 products sum as
// llama.cpp's x86 kernels do (float32 FMA lanes, dotF32 and dotF32GEMM).
// For F16 and BF16, ggml's generic dot products multiply in float32 (exact
// for fp16 and bf16 operands) and sum in double. The kernels sum in four
// interleaved double chains instead of one:
// a single chain is bound by add latency and runs several times slower
// (docs/benchmarks.md, "quant: the portable kernels' loop shapes"). The double
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

// littleEndian reports whether the host can read GGUF's little-endian
// arrays in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asF32 and asU16 view a row in place when the host byte order and the
// row's alignment allow (always, for mmapped GGUF data on amd64 and
// arm64), which saves a move per element; otherwise they return nil and the
// kernels decode bytes.
func asF32(b []byte) []float32 {
	if !littleEndian || len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

func asU16(b []byte) []uint16 {
	if !littleEndian || len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%2 != 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// dotF32 is ggml_vec_dot_f32 as x86 with AVX2 and FMA computes it (what
// llama.cpp's CPU backend runs for every vector of a MUL_MAT_ID, a MoE's
// experts, and for rows tinyBLAS refuses): vecDotF32.
func dotF32(row []byte, a *actView) float32 { return vecDotF32(f32Row(row, len(a.f)), a.f) }

// dotF32GEMM is tinyBLAS's F32 product on AVX2 (llamafile_sgemm, what
// llama.cpp's CPU backend runs for the F32 MUL_MAT of a batch whose rows
// are a multiple of 8 long): gemmDotF32.
func dotF32GEMM(row []byte, a *actView) float32 { return gemmDotF32(f32Row(row, len(a.f)), a.f) }

// f32Row views an F32 row of n values in place, or decodes it where the
// host's byte order or the row's alignment do not allow that.
func f32Row(row []byte, n int) []float32 {
	row = row[:4*n]
	w := asF32(row)
	if w == nil {
		w = make([]float32, n) // only on big-endian hosts or misaligned rows
		dequantF32(row, w)
	}
	return w[:n]
}

// vecDotF32 is ggml_vec_dot_f32 on AVX2: blocks of 32 in four 8-lane FMA
// accumulators, reduced as GGML_F32x8_REDUCE (accumulators 0+2 and 1+3,
// their sum, then the lanes as (l0+l4 + l1+l5) + (l2+l6 + l3+l7)), then
// the n%32 tail fused into that float32 sum one product at a time.
func vecDotF32(w, x []float32) float32 {
	n := len(x)
	w = w[:n]
	np := n &^ 31
	var acc [4][8]float32
	for i := 0; i < np; i += 32 {
		for j := range acc {
			for l := range acc[j] {
				k := i + 8*j + l
				acc[j][l] = FMA32(w[k], x[k], acc[j][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	s := ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]))
	for i := np; i < n; i++ {
		s = FMA32(w[i], x[i], s)
	}
	return s
}

// gemmDotF32 is one output of tinyBLAS's F32 kernel on AVX2 (n a multiple
// of 8): one 8-lane FMA accumulator over the row, then hsum, (l0+l4 +
// l2+l6) + (l1+l5 + l3+l7).
func gemmDotF32(w, x []float32) float32 {
	n := len(x)
	w = w[:n]
	var acc [8]float32
	for i := 0; i+8 <= n; i += 8 {
		for l := range acc {
			acc[l] = FMA32(w[i+l], x[i+l], acc[l])
		}
	}
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

// FMA32 is a*b+c rounded once to float32, as an FMA instruction computes
// it. The product of two float32s is exact in float64, so only the sum
// rounds, but rounding it to float64 and then to float32 can land on a
// float32 midpoint and break the tie the wrong way: the float64 sum is
// rounded to odd instead (the neighbour with an odd last bit when it is
// inexact), which makes the second rounding exact, float64 having more
// than 24+2 bits.
func FMA32(a, b, c float32) float32 {
	p, cd := float64(a)*float64(b), float64(c)
	s := p + cd
	// TwoSum: the addition's rounding error, exactly
	bb := s - p
	e := (p - (s - bb)) + (cd - bb)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 && !math.IsInf(s, 0) {
		if (e > 0) == (s > 0) {
			bits++ // the exact sum is further from zero
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

// The fp16 and bf16 products below are exact in float32: x was rounded to
// the weight's type first, as ggml does, and two 11- (8-) bit significands
// multiply into at most 22 (16) bits.

// dotF16 is ggml_vec_dot_f16; a.f is x rounded to fp16.
func dotF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	h := asU16(row)
	if h == nil {
		h = make([]uint16, len(x)) // only on big-endian hosts or misaligned rows
		for i := range h {
			h[i] = binary.LittleEndian.Uint16(row[2*i:])
		}
	}
	h = h[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		hv := (*[4]uint16)(h)
		v := (*[4]float32)(x)
		h, x = h[4:], x[4:]
		s0 += float64(f16tab[hv[0]] * v[0])
		s1 += float64(f16tab[hv[1]] * v[1])
		s2 += float64(f16tab[hv[2]] * v[2])
		s3 += float64(f16tab[hv[3]] * v[3])
	}
	for i, xv := range x {
		s0 += float64(f16tab[h[i]] * xv)
	}
	return float32((s0 + s1) + (s2 + s3))
}

// dotBF16 is ggml_vec_dot_bf16; a.f is x rounded to bf16.
func dotBF16(row []byte, a *actView) float32 {
	x := a.f
	row = row[:2*len(x)]
	h := asU16(row)
	if h == nil {
		h = make([]uint16, len(x)) // only on big-endian hosts or misaligned rows
		for i := range h {
			h[i] = binary.LittleEndian.Uint16(row[2*i:])
		}
	}
	h = h[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		hv := (*[4]uint16)(h)
		v := (*[4]float32)(x)
		h, x = h[4:], x[4:]
		s0 += float64(BF16ToFP32(hv[0]) * v[0])
		s1 += float64(BF16ToFP32(hv[1]) * v[1])
		s2 += float64(BF16ToFP32(hv[2]) * v[2])
		s3 += float64(BF16ToFP32(hv[3]) * v[3])
	}
	for i, xv := range x {
		s0 += float64(BF16ToFP32(h[i]) * xv)
	}
	return float32((s0 + s1) + (s2 + s3))
}
