package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// Once packed, a matrix's products read nothing of its original data: the
// native kernels run in C, where a page of a model file truncated on disk
// is a SIGBUS no Go code can catch, so every byte they read is a copy the
// backend owns. Types without a packed form (F32, F16) get a plain copy,
// and the rows past a packed type's groups of 8 (13 rows: 5 of them) get
// theirs. The original is overwritten after Pack, and the products must
// not change.
func TestPackedReadsNoOriginal(t *testing.T) {
	if simd.Level() == 0 || portableOnly || repackOff {
		t.Skip("no native kernels here, or repacking off: nothing runs in C")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K} {
		if f, err := formatOf(typ); err != nil || !f.native {
			continue
		}
		const rows, cols, n = 13, 256, 3
		m := randomMatrix(r, typ, rows, cols)
		x := randVec(r, n*cols)
		want := make([]float32, n*rows)
		MatMul(want, m, x, n)
		free, bytes := Pack([]Matrix{m})
		if bytes < int64(len(m.Data)/2) {
			t.Errorf("%v: Pack holds %d bytes of copies for %d of data", typ, bytes, len(m.Data))
		}
		bound := Bind(m)
		for i := range m.Data {
			m.Data[i] = 0x3c // finite in every type, and not the weights
		}
		for _, mm := range []Matrix{m, bound} {
			got := make([]float32, n*rows)
			MatMul(got, mm, x, n)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v (bound %v): row %d of vector %d = %g after the original changed, was %g: the product read the original",
						typ, mm.bound, i%rows, i/rows, got[i], want[i])
				}
			}
		}
		free()
	}
}
