package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// withPortable runs f with the native kernels turned off.
func withPortable(f func()) {
	portableOnly = true
	defer func() { portableOnly = false }()
	f()
}

// TestNativeMatchesPortable checks every native kernel against the portable
// Go kernels for every type, bit for bit (they compute the same integers and
// the same float32 operations in the same order; see runtime/simd), with
// row counts that leave ragged row tiles, vector counts that leave ragged
// vector tiles, one to several blocks per row, activations at unaligned
// addresses, and non-finite scales.
func TestNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build (" + simd.Describe() + ")")
	}
	r := rand.New(rand.NewPCG(21, 22))
	checked := 0
	for _, typ := range allTypes {
		if !formats[typ].native {
			t.Logf("%v: no native kernel, portable path only", typ)
			continue
		}
		checked++
		be := formats[typ].elems
		if be == 1 {
			be = 32
		}
		for _, shape := range []struct{ rows, blocks, n int }{
			{1, 1, 1}, {3, 1, 2}, {5, 2, 1}, {7, 3, 3}, {13, 1, 5}, {37, 4, 9}, {64, 2, 4}, {9, 7, 17},
		} {
			cols := shape.blocks * be
			if be == 32 && shape.blocks > 2 {
				cols = shape.blocks * 32 * 3 // longer rows for the 32-blocks
			}
			m := randomMatrix(r, typ, shape.rows, cols)
			// one element of slack so x starts off a 32-byte boundary
			buf := randVec(r, shape.n*cols+1)
			x := buf[1:]
			native := make([]float32, shape.n*m.Rows)
			portable := make([]float32, shape.n*m.Rows)
			MatMul(native, m, x, shape.n)
			withPortable(func() { MatMul(portable, m, x, shape.n) })
			for k := range native {
				if math.Float32bits(native[k]) != math.Float32bits(portable[k]) {
					t.Fatalf("%v %dx%d n=%d: vector %d row %d: native %g (%#x), portable %g (%#x)", typ, m.Rows, cols, shape.n,
						k/m.Rows, k%m.Rows, native[k], math.Float32bits(native[k]), portable[k], math.Float32bits(portable[k]))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatalf("level %d (%s) but no type has a native kernel", simd.Level(), simd.Describe())
	}
}

// TestNativeQuantizerBitIdentical checks that the vectorized Q8_0/Q8_1
// activation quantizer gives the portable quantizer's bytes: quants,
// fp16-rounded scales, sums and Q8_1's s, including all-zero blocks, exact
// halves (round away from zero) and values that round to the clamp.
func TestNativeQuantizerBitIdentical(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(23, 24))
	x := randVec(r, 32*40)
	for i := 0; i < 32; i++ {
		x[32+i] = 0                   // a zero block
		x[64+i] = float32(i-16) * 0.5 // halves after scaling by 127/amax? make amax 127 exactly
	}
	x[64+31] = 127 // scale 1: every half is a tie
	for i := 0; i < 32; i++ {
		x[96+i] = float32(i) * 1e-30 // tiny scale: fp16 subnormal/zero d
	}
	for i := 128; i < 160; i++ {
		x[i] *= 1e6
	}
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q8_1} {
		var a, b acts
		a.prepare(typ, x, len(x), 1, true)
		b.prepare(typ, x, len(x), 1, false)
		for i := range b.qs {
			if a.qs[i] != b.qs[i] {
				t.Fatalf("%v: quant %d (x=%g): native %d, portable %d", typ, i, x[i], a.qs[i], b.qs[i])
			}
		}
		for i := range b.d {
			if math.Float32bits(a.d[i]) != math.Float32bits(b.d[i]) || a.sums[i] != b.sums[i] {
				t.Fatalf("%v: block %d: native d=%g sum=%d, portable d=%g sum=%d", typ, i, a.d[i], a.sums[i], b.d[i], b.sums[i])
			}
			if typ == ggml.Q8_1 && math.Float32bits(a.s[i]) != math.Float32bits(b.s[i]) {
				t.Fatalf("%v: block %d: native s=%g, portable s=%g", typ, i, a.s[i], b.s[i])
			}
		}
	}
}
