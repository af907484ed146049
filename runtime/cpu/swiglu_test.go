package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"vkchat/runtime/simd"
)

// TestSwiGLUNativeMatchesPortable checks the native SwiGLU bit for bit
// against the portable loop: lengths with and without a tail past the
// 8-wide vectors, gate values across expf's whole range including where
// exp(-x) is subnormal (x near 100), overflows (x below -88) or is cut to
// 0 or +inf (|x| past 133), and signed zeros.
func TestSwiGLUNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(41, 42))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 88.7, -88.7, 89, -89, 100, -100, 103.9, 104, 130, -130, 140, -140, 1e30, -1e30}
	for _, n := range []int{1, 7, 8, 9, 31, 64, 5632, 5633} {
		gate := make([]float32, n)
		up := make([]float32, n)
		for i := range gate {
			switch i % 3 {
			case 0:
				gate[i] = float32(r.NormFloat64() * 4)
			case 1:
				gate[i] = float32(r.Float64()*300 - 150)
			default:
				gate[i] = special[r.IntN(len(special))]
			}
			up[i] = float32(r.NormFloat64())
		}
		native, portable := slices.Clone(gate), slices.Clone(gate)
		swiglu(native, up)
		nativeSwiGLU = false
		swiglu(portable, up)
		nativeSwiGLU = true
		for i := range native {
			if math.Float32bits(native[i]) != math.Float32bits(portable[i]) {
				t.Fatalf("n=%d: swiglu(gate %g, up %g) native %g (%#x), portable %g (%#x)",
					n, gate[i], up[i], native[i], math.Float32bits(native[i]), portable[i], math.Float32bits(portable[i]))
			}
		}
	}
}

// TestSiLU bounds silu against float64 arithmetic, so that the emulated
// llama.cpp expf cannot drift far from the function it approximates.
func TestSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for i := 0; i < 100000; i++ {
		x := float32(r.NormFloat64() * 8)
		want := float64(x) / (1 + math.Exp(-float64(x)))
		if got := float64(silu(x)); math.Abs(got-want) > 4e-7*math.Abs(want)+1e-30 {
			t.Fatalf("silu(%g) = %g, float64 %g", x, got, want)
		}
	}
}

// TestExp64 bounds exp64 against math.Exp over float32's whole exp range:
// a few float64 ulps, so that its float32 rounding is e^x's (checked
// against float32(math.Exp), which may differ only at a float32 midpoint:
// none expected in this sample).
func TestExp64(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for i := 0; i < 300000; i++ {
		x := float32(r.Float64()*200 - 105)
		got, want := exp64(x), math.Exp(float64(x))
		if want > math.MaxFloat32 {
			if !math.IsInf(float64(float32(got)), 1) {
				t.Fatalf("exp64(%g) = %g: does not round to +inf in float32", x, got)
			}
			continue // clamped: only its float32 rounding is specified
		}
		if rel := math.Abs(got-want) / want; rel > 1e-15 {
			t.Fatalf("exp64(%g) = %g, math.Exp %g: relative error %.3g", x, got, want, rel)
		}
		if float32(got) != float32(want) {
			t.Fatalf("exp64(%g) rounds to float32 %g, math.Exp to %g", x, float32(got), float32(want))
		}
	}
	for _, c := range []struct{ x, want float32 }{{0, 1}, {-120, 0}, {-1e30, 0}, {100, float32(math.Inf(1))}, {1e30, float32(math.Inf(1))}} {
		if got := float32(exp64(c.x)); got != c.want {
			t.Errorf("float32(exp64(%g)) = %g, want %g", c.x, got, c.want)
		}
	}
}

// TestSiLUAllMatchesSiLU: siluAll (the Mamba2 conv's activation, swiglu
// against ones) gives silu's bits for every value, on the native kernel
// and the portable loop, tails past the vectors included.
func TestSiLUAllMatchesSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 88.7, -88.7, 89, -89, 100, -100, 104, 140, -140, 1e30, -1e30}
	ones := make([]float32, 4099)
	for i := range ones {
		ones[i] = 1
	}
	for _, native := range []bool{true, false} {
		nativeSwiGLU = native
		for _, n := range []int{1, 7, 9, 4096, 4099} {
			x := make([]float32, n)
			for i := range x {
				if i%4 == 3 {
					x[i] = special[r.IntN(len(special))]
				} else {
					x[i] = float32(r.NormFloat64() * 6)
				}
			}
			got := slices.Clone(x)
			siluAll(got, ones)
			for i, v := range x {
				if want := silu(v); math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("native %v, n=%d: siluAll(%g) = %g (%#x), silu %g (%#x)", native, n, v, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
				}
			}
		}
	}
	nativeSwiGLU = true
}

// TestSoftcapSharedMatchesSoftcap: the soft-cap shared across the cores
// caps every value once, with softcap's bits, at sizes under, at and well
// past the size at which it splits.
func TestSoftcapSharedMatchesSoftcap(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for _, n := range []int{1, 16383, 16384, 262144, 262147} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 40)
		}
		got, want := slices.Clone(x), slices.Clone(x)
		softcapShared(got, 30)
		softcap(want, 30)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: value %d (%g) capped to %g, softcap %g", n, i, x[i], got[i], want[i])
			}
		}
	}
}
