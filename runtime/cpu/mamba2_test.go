package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/simd"
)

// TestSSMScanNativeMatchesPortable: runtime/simd's Mamba2 scan of one head
// leaves the same state and outputs as scanRow, bit for bit, for state
// sizes with and without a whole 32-lane part and a tail, over several
// tokens.
func TestSSMScanNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := func() float32 { return float32(rng.NormFloat64()) }
	for _, N := range []int{16, 32, 40, 64, 128, 131} {
		const P = 24
		native, portable := make([]float32, P*N), make([]float32, P*N)
		for i := range native {
			native[i] = r()
		}
		copy(portable, native)
		x, B, C := make([]float32, P), make([]float32, N), make([]float32, N)
		yn, yp := make([]float32, P), make([]float32, P)
		for tok := 0; tok < 5; tok++ {
			for i := range x {
				x[i] = r()
			}
			for i := range B {
				B[i], C[i] = r(), r()
			}
			dt := softplus1p(r() - 2)
			dA := float32(math.Exp(float64(dt * -float32(0.5+rng.Float64()))))
			if !simd.SSMScanHead(native, x, B, C, yn, dA, dt) {
				t.Fatal("native scan unavailable")
			}
			for p := 0; p < P; p++ {
				yp[p] = scanRow(portable[p*N:(p+1)*N], B, C, dA, x[p]*dt)
			}
			for p := range yp {
				if math.Float32bits(yn[p]) != math.Float32bits(yp[p]) {
					t.Fatalf("N %d token %d row %d: native %g, portable %g", N, tok, p, yn[p], yp[p])
				}
			}
			for i := range native {
				if math.Float32bits(native[i]) != math.Float32bits(portable[i]) {
					t.Fatalf("N %d token %d: state %d native %g, portable %g", N, tok, i, native[i], portable[i])
				}
			}
		}
	}
}
