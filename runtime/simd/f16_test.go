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
