package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
)

// A bound Matrix (Bind) gives the bits of an unbound one: before Pack
// (bound to no copy, the original layout), after Pack (bound to the copy),
// and after the copy is freed (the copy it still holds). Bind skips only
// the lookup, never changes the arithmetic.
func TestBindKeepsProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.F32} {
		m := randomMatrix(r, typ, 40, 512)
		x := randVec(r, 2*512)
		want := make([]float32, 2*40)
		MatMul(want, m, x, 2)
		check := func(stage string, bm Matrix) {
			t.Helper()
			got := make([]float32, len(want))
			MatMul(got, bm, x, 2)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v %s: [%d] = %g, unbound %g", typ, stage, i, got[i], want[i])
				}
			}
		}
		check("bound before Pack", Bind(m))
		free, _ := Pack([]Matrix{m})
		bound := Bind(m)
		if packable(&m) && bound.packed == nil {
			t.Errorf("%v: Bind after Pack found no copy", typ)
		}
		check("bound after Pack", bound)
		free()
		check("bound, its copy freed", bound)
	}
}
