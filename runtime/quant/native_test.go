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

// TestNativeQuantizerBitIdentical checks that the vectorized Q8_0/Q8_1/Q8_K
// activation quantizers give the portable quantizers' bytes: quants,
// scales, sums (Q8_K: bsums per 16) and Q8_1's s, including all-zero
// blocks, exact halves (round away from zero for Q8_0, to even for Q8_K),
// ties for the largest magnitude and tiny and huge scales.
func TestNativeQuantizerBitIdentical(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(23, 24))
	x := randVec(r, 32*40)
	for i := 0; i < 32; i++ {
		x[32+i] = 0                   // a zero block
		x[64+i] = float32(i-16) * 0.5 // halves; with amax 127 (below) the scale is 1
	}
	x[64+31] = 127 // scale 1: every half is a tie
	for i := 0; i < 32; i++ {
		x[96+i] = float32(i) * 1e-30 // tiny scale: fp16 subnormal/zero d
	}
	for i := 128; i < 160; i++ {
		x[i] *= 1e6
	}
	for i := 0; i < 256; i++ {
		x[512+i] = float32(i%7) - 3 // +3 and -3 tie for the largest magnitude: the first one wins
		x[768+i] = 0                // a zero Q8_K block
	}
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q8_1, ggml.Q8_K} {
		var a, b acts
		a.prepare(typ, x, len(x), 1, true)
		b.prepare(typ, x, len(x), 1, false)
		for i := range b.sums {
			if a.sums[i] != b.sums[i] {
				t.Fatalf("%v: sum %d: native %d, portable %d", typ, i, a.sums[i], b.sums[i])
			}
		}
		for i := range b.qs {
			if a.qs[i] != b.qs[i] {
				t.Fatalf("%v: quant %d (x=%g): native %d, portable %d", typ, i, x[i], a.qs[i], b.qs[i])
			}
		}
		for i := range b.d {
			if math.Float32bits(a.d[i]) != math.Float32bits(b.d[i]) {
				t.Fatalf("%v: block %d: native d=%g sum=%d, portable d=%g sum=%d", typ, i, a.d[i], a.sums[i], b.d[i], b.sums[i])
			}
			if typ == ggml.Q8_1 && math.Float32bits(a.s[i]) != math.Float32bits(b.s[i]) {
				t.Fatalf("%v: block %d: native s=%g, portable s=%g", typ, i, a.s[i], b.s[i])
			}
		}
	}
}

// TestPackedMatchesPortable checks the kernels for repacked weights (Q4_0
// and Q8_0 interleaved 4 bytes at a time, the other quantized types block
// by block, groups of 8 rows with a row tail that stays unpacked) bit for
// bit against the portable path, and that freeing the packed copies goes
// back to the unpacked kernels.
func TestPackedMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(25, 26))
	for _, typ := range allTypes {
		if !packable(&Matrix{Type: typ, Rows: 8, Cols: 256, Data: []byte{0}}) {
			continue
		}
		for _, shape := range []struct{ rows, cols, n int }{{8, 32, 1}, {16, 64, 3}, {37, 96, 5}, {64, 2048, 2}, {13, 640, 9}, {8, 32, 70}} {
			if shape.cols%formats[typ].elems != 0 {
				shape.cols = (shape.cols + 255) / 256 * 256
			}
			m := randomMatrix(r, typ, shape.rows, shape.cols)
			x := randVec(r, shape.n*shape.cols)
			want := make([]float32, shape.n*m.Rows)
			withPortable(func() { MatMul(want, m, x, shape.n) })
			free, _ := Pack([]Matrix{m})
			if lookupPacked(&m) == nil {
				t.Fatalf("%v %dx%d: not packed", typ, m.Rows, m.Cols)
			}
			got := make([]float32, len(want))
			MatMul(got, m, x, shape.n)
			one := make([]float32, m.Rows)
			MatVec(one, m, x[:m.Cols])
			free()
			if lookupPacked(&m) != nil {
				t.Fatalf("%v: still packed after free", typ)
			}
			for k := range want {
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
					t.Fatalf("%v %dx%d n=%d: vector %d row %d: packed %g, portable %g", typ, m.Rows, m.Cols, shape.n, k/m.Rows, k%m.Rows, got[k], want[k])
				}
			}
			for i := range one {
				if math.Float32bits(one[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v %dx%d MatVec row %d: packed %g, portable %g", typ, m.Rows, m.Cols, i, one[i], want[i])
				}
			}
		}
	}
}

// TestPackShared checks that two backends packing the same weights share
// one copy and that it lives until both have freed it.
func TestPackShared(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	m := randomMatrix(rand.New(rand.NewPCG(27, 28)), ggml.Q4_0, 16, 64)
	free1, n1 := Pack([]Matrix{m})
	p := lookupPacked(&m)
	free2, n2 := Pack([]Matrix{m})
	if p == nil || lookupPacked(&m) != p {
		t.Fatal("the second Pack did not share the first one's copy")
	}
	if n1 != int64(len(p.data)) || n2 != n1 || n1 < int64(len(m.Data)) {
		t.Fatalf("Pack reported %d and %d bytes for a %d-byte copy of %d bytes", n1, n2, len(p.data), len(m.Data))
	}
	free1()
	free1() // idempotent
	if lookupPacked(&m) != p {
		t.Fatal("freed while another Pack still holds it")
	}
	free2()
	if lookupPacked(&m) != nil {
		t.Fatal("still packed after both frees")
	}
	other := m
	other.Rows = 8 // same data, another shape: not the packed copy
	free3, _ := Pack([]Matrix{m})
	defer free3()
	if lookupPacked(&other) != nil {
		t.Fatal("a matrix of another shape over the same data found the packed copy")
	}
}

// TestParallelRange checks that every index is visited exactly once for
// sizes below, at and above the grain, with the pool's threads.
func TestParallelRange(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 4096, 10007} {
		seen := make([]int32, n)
		ParallelRange(n, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}

// TestNativeMatMulRaggedTiles uses rows long enough that the native
// activation tile (nativeTileBytes) holds fewer vectors than the batch, so
// the batch splits into 8-aligned tiles and a ragged last one; every
// result must equal MatVec's and the portable path's bit for bit.
func TestNativeMatMulRaggedTiles(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(29, 30))
	const cols, n = 8192, 53
	if tile := nativeTileBytes / (cols + cols/4); tile >= n {
		t.Fatalf("a tile of %d vectors does not split %d", tile, n)
	}
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_K, ggml.Q6_K} {
		m := randomMatrix(r, typ, 19, cols)
		free, _ := Pack([]Matrix{m})
		defer free()
		x := randVec(r, n*cols)
		got, want := make([]float32, n*m.Rows), make([]float32, n*m.Rows)
		MatMul(got, m, x, n)
		withPortable(func() { MatMul(want, m, x, n) })
		one := make([]float32, m.Rows)
		for v := 0; v < n; v++ {
			MatVec(one, m, x[v*cols:(v+1)*cols])
			for i := range one {
				k := v*m.Rows + i
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) || math.Float32bits(one[i]) != math.Float32bits(got[k]) {
					t.Fatalf("%v vector %d row %d: MatMul %g, MatVec %g, portable %g", typ, v, i, got[k], one[i], want[k])
				}
			}
		}
	}
}

// TestMXFP4NativeScales runs the native MXFP4 kernels, unpacked and packed,
// over every E8M0 scale byte (randomMatrix keeps to ordinary weights'):
// the denormal scales 0 and 1, which the kernels build apart from the
// others, and the largest, whose products overflow, must give the portable
// kernel's bits (NaN for NaN).
func TestMXFP4NativeScales(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(27, 28))
	const rows, cols, n = 16, 512, 3
	m := randomMatrix(r, ggml.MXFP4, rows, cols)
	for i, e := 0, 0; i < len(m.Data); i, e = i+17, e+1 {
		m.Data[i] = byte(e) // blocks run through all 256 scales
	}
	x := randVec(r, n*cols)
	want := make([]float32, n*rows)
	withPortable(func() { MatMul(want, m, x, n) })
	check := func(how string, got []float32) {
		t.Helper()
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) && !(math.IsNaN(float64(got[k])) && math.IsNaN(float64(want[k]))) {
				t.Fatalf("%s: vector %d row %d: %g (%#x), portable %g (%#x)", how, k/rows, k%rows, got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
			}
		}
	}
	got := make([]float32, n*rows)
	MatMul(got, m, x, n)
	check("native", got)
	free, _ := Pack([]Matrix{m})
	defer free()
	if lookupPacked(&m) == nil {
		t.Fatal("MXFP4 matrix not packed")
	}
	MatMul(got, m, x, n)
	check("packed", got)
}
