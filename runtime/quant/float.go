package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// F32, F16 and BF16 rows are little-endian arrays. ggml's generic dot
// products multiply in float32 (exact for fp16 and bf16 operands) and sum in
// double. The kernels sum in four interleaved double chains instead of one:
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

// dotF32 is ggml_vec_dot_f32.
func dotF32(row []byte, a *actView) float32 {
	x := a.f
	row = row[:4*len(x)]
	w := asF32(row)
	if w == nil {
		w = make([]float32, len(x)) // only on big-endian hosts or misaligned rows
		dequantF32(row, w)
	}
	w = w[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		wv := (*[4]float32)(w)
		v := (*[4]float32)(x)
		w, x = w[4:], x[4:]
		s0 += float64(float32(wv[0] * v[0]))
		s1 += float64(float32(wv[1] * v[1]))
		s2 += float64(float32(wv[2] * v[2]))
		s3 += float64(float32(wv[3] * v[3]))
	}
	for i, xv := range x {
		s0 += float64(float32(w[i] * xv))
	}
	return float32((s0 + s1) + (s2 + s3))
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
