package simd_test

import (
	"math"
	"testing"

	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// TestF16ToF32Exhaustive widens every half (in a length that leaves a
// tail past the 8-wide vectors) and compares with the portable conversion.
func TestF16ToF32Exhaustive(t *testing.T) {
	src := make([]uint16, 1<<16+3)
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]float32, len(src))
	if !simd.F16ToF32(dst, src) {
		t.Skip("no native kernels: " + simd.Describe())
	}
	for i, h := range src {
		want := quant.FP16ToFP32(h)
		if math.IsNaN(float64(want)) {
			if !math.IsNaN(float64(dst[i])) {
				t.Fatalf("%#04x: %g, want NaN", h, dst[i])
			}
			continue
		}
		if math.Float32bits(dst[i]) != math.Float32bits(want) {
			t.Fatalf("%#04x: %g, want %g", h, dst[i], want)
		}
	}
}

// TestF32ToF16 narrows floats around every half (exact halves, the
// midpoints between neighbours and one float32 ulp either side of them,
// subnormals, overflow to infinity) in a length with a tail past the
// vectors, and compares with the portable conversion; RoundF16 must be the
// same narrowing widened back.
func TestF32ToF16(t *testing.T) {
	var src []float32
	for h := 0; h < 1<<16; h++ {
		f := quant.FP16ToFP32(uint16(h))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		next := quant.FP16ToFP32(uint16(h + 1))
		mid := float32((float64(f) + float64(next)) / 2)
		src = append(src, f, mid, math.Nextafter32(mid, -1e9), math.Nextafter32(mid, 1e9))
	}
	src = append(src, 1e9, -1e9, 65520, 65519.99, 3)
	dst := make([]uint16, len(src))
	if !simd.F32ToF16(dst, src) {
		t.Skip("no native kernels: " + simd.Describe())
	}
	round := make([]float32, len(src))
	simd.RoundF16(round, src)
	for i, f := range src {
		want := quant.FP32ToFP16(f)
		if dst[i] != want {
			t.Fatalf("F32ToF16(%g) = %#04x, want %#04x", f, dst[i], want)
		}
		if w := quant.FP16ToFP32(want); math.Float32bits(round[i]) != math.Float32bits(w) {
			t.Fatalf("RoundF16(%g) = %g, want %g", f, round[i], w)
		}
	}
}

// TestReadSum checks the streaming read's checksum against the portable
// one on a buffer with a partial last group.
func TestReadSumCoversTheBuffer(t *testing.T) {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i * 7)
	}
	a := simd.ReadSum(b)
	b[4000] ^= 1
	if simd.ReadSum(b) == a {
		t.Fatal("a changed byte did not change the checksum")
	}
	if bw := simd.ReadBandwidth(1, 1); !(bw > 0) {
		t.Fatalf("read bandwidth %g", bw)
	}
}
