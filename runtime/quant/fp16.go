package quant

import (
	"math"
	"sync"
)

// FP16ToFP32 widens an IEEE binary16 value. The conversion is exact.
func FP16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // inf and NaN keep their payload
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// binary16 subnormals are normal in binary32: shift the mantissa up
	// until its leading one becomes the implicit bit.
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// FP32ToFP16 rounds to the nearest binary16, ties to even, as ggml's
// ggml_compute_fp32_to_fp16 and the F16C instruction do. Values beyond the
// binary16 range become infinities; every NaN becomes the quiet NaN 0x7e00
// with the input's sign, which is what ggml's portable conversion returns.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | 0x7e00
	case abs >= 0x477ff000: // 65520, the midpoint above 65504, rounds to even: inf
		return sign | 0x7c00
	case abs >= 0x38800000: // 2^-14, the smallest normal binary16
		// Adding 0xfff plus the lowest kept bit rounds the 13 dropped bits
		// to nearest even; a carry correctly bumps the exponent.
		r := abs + 0xfff + (abs>>13)&1
		return sign | uint16((r-0x38000000)>>13)
	case abs <= 0x33000000: // at most half the smallest subnormal: ties to zero
		return sign
	}
	// The result is subnormal: the value in units of 2^-24, rounded.
	e := abs >> 23
	mant := abs&0x7fffff | 0x800000
	shift := 126 - e
	h := mant >> shift
	rem := mant & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || rem == half && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// BF16ToFP32 widens a bfloat16 value. The conversion is exact.
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 rounds like ggml's ggml_compute_fp32_to_bf16: to nearest even on
// the raw bits (so subnormals are kept, and overflow rounds to infinity), and
// NaNs are truncated with the quiet bit forced so they stay NaN.
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// f16tab is ggml's ggml_table_f32_f16: block scales are widened in the hot
// loops with one load instead of a branchy conversion.
var f16tab = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = FP16ToFP32(uint16(i))
	}
	return &t
}()

// f16le reads the little-endian fp16 at b[0:2] as float32.
func f16le(b []byte) float32 {
	_ = b[1]
	return f16tab[uint16(b[0])|uint16(b[1])<<8]
}

// GELUTable is llama.cpp's CPU GELU (GGML_GELU_FP16): for every F16 value x
// (indexed by its bits), 0.5x(1+tanh(√(2/π)·x·(1+0.044715x²))) computed in
// float32 and stored as F16. Both backends read this one table (the Vulkan
// one uploads it), so their GELUs agree bit for bit.
var GELUTable = sync.OnceValue(func() []float32 {
	const sqrt2OverPi, coefA = float32(0.79788456080286535587989211986876), float32(0.044715)
	t := make([]float32, 1<<16)
	for i := range t {
		x := FP16ToFP32(uint16(i))
		// 1 + A·x·x with the second product fused, as GCC contracts
		// ggml_gelu_f32's expression: it moves a few entries by an F16
		// ulp, which Gemma 4's logits show
		in := FMA32(coefA*x, x, 1)
		// tanhf as float64's tanh rounded to float32, as runtime/cpu's
		g := 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2OverPi*x*in))))
		t[i] = FP16ToFP32(FP32ToFP16(g))
	}
	return t
})
