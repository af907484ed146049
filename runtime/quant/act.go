package quant

import (
	"math"
	"unsafe"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// actView is one activation vector converted to a weight type's vec_dot_type,
// in the form the row kernels read.
type actView struct {
	f    []float32 // F32: x itself; F16/BF16: x rounded to that type and widened
	qs   []int8    // Q8_0, Q8_1, Q8_K quants
	d    []float32 // per-block scale; for Q8_0/Q8_1 already rounded to fp16 as ggml stores it
	s    []float32 // Q8_1: the fp16-rounded d*sum(qs)
	sums []int32   // Q8_0/Q8_1: sum of qs per 32; Q8_K: per 16 (ggml's bsums)
	py   []uint64  // the quants packed for the SWAR kernels (swar.go)
}

// acts holds nvec vectors of n elements in one vec_dot_type. It is recycled
// (actsFree): MatVec runs many times per token and must not allocate.
type acts struct {
	typ     ggml.Type
	n, nvec int
	f       []float32
	qs      []int8
	d, s    []float32
	sums    []int32
	py      []uint64
	views   []actView
	native  simd.Acts // the same buffers for the native kernels
}

var actsFree = freeList[acts]{make(chan *acts, 16), func() *acts { return new(acts) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// bytesPerVector is the converted size of one vector, for cache tiling.
func (a *acts) bytesPerVector() int {
	switch a.typ {
	case ggml.F32, ggml.F16, ggml.BF16:
		return 4 * a.n
	}
	return 3 * a.n // int8 quants and their 16-bit packed copy; scales are noise
}

// view returns vector v.
func (a *acts) view(v int) actView {
	n := a.n
	switch a.typ {
	case ggml.F32, ggml.F16, ggml.BF16:
		return actView{f: a.f[v*n : (v+1)*n]}
	case ggml.Q8_K:
		nb := n / ggml.QK_K
		return actView{qs: a.qs[v*n : (v+1)*n], d: a.d[v*nb : (v+1)*nb], sums: a.sums[v*nb*16 : (v+1)*nb*16], py: a.py[v*n/4 : (v+1)*n/4]}
	}
	nb := n / 32
	av := actView{qs: a.qs[v*n : (v+1)*n], d: a.d[v*nb : (v+1)*nb], sums: a.sums[v*nb : (v+1)*nb], py: a.py[v*n/4 : (v+1)*n/4]}
	if a.typ == ggml.Q8_1 {
		av.s = a.s[v*nb : (v+1)*nb]
	}
	return av
}

// prepare converts nvec vectors of n elements (token-major in x) to typ.
// For the native kernels (native true) it skips the SWAR packing they do
// not read and quantizes with the vectorized, bit-identical quantizer.
func (a *acts) prepare(typ ggml.Type, x []float32, n, nvec int, native bool) {
	a.typ, a.n, a.nvec = typ, n, nvec
	x = x[:n*nvec]
	switch typ {
	case ggml.F32:
		a.f = x
	case ggml.F16:
		a.f = grow(a.f, len(x))
		for i, v := range x {
			a.f[i] = f16tab[FP32ToFP16(v)]
		}
	case ggml.BF16:
		a.f = grow(a.f, len(x))
		for i, v := range x {
			a.f[i] = BF16ToFP32(FP32ToBF16(v))
		}
	case ggml.Q8_0, ggml.Q8_1:
		nb := len(x) / 32
		a.qs = grow(a.qs, len(x))
		a.d = grow(a.d, nb)
		a.sums = grow(a.sums, nb)
		a.py = grow(a.py, len(x)/4)
		var s []float32
		if typ == ggml.Q8_1 {
			a.s = grow(a.s, nb)
			s = a.s
		}
		if native && simd.QuantizeQ8(x, a.qs, a.d, a.sums, s) {
			break
		}
		for i := 0; i < nb; i++ {
			q := (*[32]int8)(a.qs[i*32:])
			d, h := quantQ8ActBlock((*[32]float32)(x[i*32:]), q)
			a.d[i] = f16tab[h]
			var sum int32
			for _, v := range q {
				sum += int32(v)
			}
			a.sums[i] = sum
			if typ == ggml.Q8_1 {
				a.s[i] = f16tab[FP32ToFP16(float32(float32(sum)*d))]
			}
		}
		packY(a.py, a.qs)
	case ggml.Q8_K:
		nb := len(x) / ggml.QK_K
		a.qs = grow(a.qs, len(x))
		a.d = grow(a.d, nb)
		a.sums = grow(a.sums, nb*16)
		a.py = grow(a.py, len(x)/4)
		if !native || !simd.QuantizeQ8K(x, a.qs, a.d, a.sums) {
			for i := 0; i < nb; i++ {
				a.d[i] = quantQ8KBlock((*[256]float32)(x[i*256:]), (*[256]int8)(a.qs[i*256:]), (*[16]int32)(a.sums[i*16:]))
			}
		}
		if !native {
			packY(a.py, a.qs)
		}
	default:
		panic("quant: no activation format " + typ.String())
	}
	a.native = simd.Acts{Qs: a.qs, D: a.d, S: a.s, Sums: a.sums, F: a.f, N: n}
}

// quantQ8Block is quantize_row_q8_0_ref (and the quants of q8_1_ref) for one
// block. It returns the unrounded scale and its fp16 encoding.
func quantQ8Block(x *[32]float32, q *[32]int8) (float32, uint16) {
	amax := blockAmax(x)
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	for j, v := range x {
		q[j] = int8(math.Round(float64(float32(v * id)))) // roundf: half away from zero
	}
	return d, FP32ToFP16(d)
}

// blockAmax is the largest magnitude in a block of 32, the Q8 quantizers'
// scale before its division by 127.
func blockAmax(x *[32]float32) float32 {
	var amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	return amax
}

// quantQ8ActBlock is ggml-cpu's x86 quantize_row_q8_0 for one block, the
// Q8_0 activations llama.cpp's references here were made with: it scales
// by 127/amax (not 1/(amax/127) as the reference quantizer does) and rounds
// half to even (not away from zero), either of which moves a quant at a
// rounding tie. Its x86 quantize_row_q8_1 rounds the quants alike, so Q8_1
// activations take it too (with dotQ4_1's AVX2 lanes synth-Q4_1 matches
// llama.cpp at every position; either alone did not).
func quantQ8ActBlock(x *[32]float32, q *[32]int8) (float32, uint16) {
	amax := blockAmax(x)
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	for j, v := range x {
		q[j] = int8(math.RoundToEven(float64(v * id)))
	}
	return d, FP32ToFP16(d)
}

// quantQ8KBlock is quantize_row_q8_K_ref for one super-block; it returns d.
func quantQ8KBlock(x *[256]float32, q *[256]int8, bsums *[16]int32) float32 {
	var max, amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, max = a, v
		}
	}
	if amax == 0 {
		*q = [256]int8{}
		*bsums = [16]int32{}
		return 0
	}
	iscale := -127 / max
	for j, v := range x {
		n := nearestInt(float32(iscale * v))
		if n > 127 {
			n = 127
		}
		q[j] = int8(n)
	}
	for j := range bsums {
		var s int32
		for _, v := range q[16*j : 16*j+16] {
			s += int32(v)
		}
		bsums[j] = s
	}
	return 1 / iscale
}

// nearestInt is ggml's nearest_int: round to nearest even via the float
// mantissa, valid for |f| < 2^22.
func nearestInt(f float32) int32 {
	v := f + 12582912
	return int32(math.Float32bits(v)&0x7fffff) - 0x400000
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// asInt8 views bytes as int8 without copying.
func asInt8(b []byte) []int8 {
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}
