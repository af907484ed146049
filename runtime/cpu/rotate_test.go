package cpu

import (
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/quant"
)

// fwhtRef is the orthonormal Walsh-Hadamard transform of y in ggml's CPU
// order, written recursively rather than as hadamard's loops: every value
// times the f32 1/sqrtf(n) first, then both halves transformed and their
// sums and differences taken (the same f32 additions as butterflies of
// half-lengths 1, 2, 4, ...). scaleLast moves the scale after the
// butterflies instead, the order hadamard had before.
func fwhtRef(y []float32, scaleLast bool) {
	sc := float32(1 / math.Sqrt(float64(len(y))))
	if !scaleLast {
		for i := range y {
			y[i] *= sc
		}
	}
	var rec func(z []float32)
	rec = func(z []float32) {
		h := len(z) / 2
		if h == 0 {
			return
		}
		rec(z[:h])
		rec(z[h:])
		for j := 0; j < h; j++ {
			a, b := z[j], z[j+h]
			z[j], z[j+h] = a+b, a-b
		}
	}
	rec(y)
	if scaleLast {
		for i := range y {
			y[i] *= sc
		}
	}
}

// TestHadamardScalesFirst: hadamard rounds as ggml's CPU fwht (the scale,
// then the butterflies), to the bit, for the orders a cache rotates by; at
// order 128, whose 1/√n is not a power of two, the rows include ones where
// the other order (butterflies, then the scale) rounds a value to a
// different f16 (what an f16 store or a block scale would see), so the
// test tells the two orders apart.
func TestHadamardScalesFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	for _, n := range []int{64, 128, 256} {
		const rows = 512
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		got := append([]float32(nil), x...)
		hadamard(got, n)
		bitsOff, f16Off := 0, 0
		for r := 0; r < rows; r++ {
			first := append([]float32(nil), x[r*n:(r+1)*n]...)
			last := append([]float32(nil), first...)
			fwhtRef(first, false)
			fwhtRef(last, true)
			for i := range first {
				if g := got[r*n+i]; math.Float32bits(g) != math.Float32bits(first[i]) {
					t.Fatalf("order %d row %d value %d: %g, ggml's order %g", n, r, i, g, first[i])
				}
				if first[i] != last[i] {
					bitsOff++
				}
				if quant.FP32ToFP16(first[i]) != quant.FP32ToFP16(last[i]) {
					f16Off++
				}
			}
		}
		t.Logf("order %d: scaling last changes %d of %d values, %d of them in f16", n, bitsOff, rows*n, f16Off)
		switch {
		case n == 128 && f16Off == 0:
			t.Errorf("order 128: no value rounds to another f16 with the scale last; the rows do not tell the orders apart")
		case n != 128 && bitsOff != 0:
			t.Errorf("order %d: the scale is a power of two, yet the orders differ in %d values", n, bitsOff)
		}
	}
}
