package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/simd"
)

// TestRMSNormNativeMatchesPortable: lengths with and without tails past
// the vectors, with and without a weight, in place and not, values across
// many magnitudes; the native kernel must give the portable bits.
func TestRMSNormNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{1, 3, 4, 7, 8, 13, 64, 768, 2051} {
		for _, weighted := range []bool{false, true} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(30)-15)))
			}
			var w []float32
			if weighted {
				w = make([]float32, n)
				for i := range w {
					w[i] = float32(r.NormFloat64())
				}
			}
			native, portable := make([]float32, n), make([]float32, n)
			rmsNorm(native, x, w, 1e-6)
			nativeNorm = false
			rmsNorm(portable, x, w, 1e-6)
			inPlace := slices.Clone(x)
			rmsNorm(inPlace, inPlace, w, 1e-6)
			nativeNorm = true
			for i := range x {
				if math.Float32bits(native[i]) != math.Float32bits(portable[i]) || inPlace[i] != portable[i] {
					t.Fatalf("n=%d weighted=%v [%d]: native %g, portable %g, in place %g", n, weighted, i, native[i], portable[i], inPlace[i])
				}
			}
		}
	}
}

// TestRopeNativeMatchesPortable: adjacent and NeoX pairs, rotary dims
// with tails past the vectors, partial rotation, LongRoPE factors and an
// attention factor, positions near and far; native bits must be the
// portable ones, and dims past the rotation must pass through.
func TestRopeNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(53, 54))
	for _, dims := range []int{2, 6, 8, 16, 64, 96, 128} {
		for _, neox := range []bool{false, true} {
			for _, long := range []bool{false, true} {
				t.Run(fmt.Sprintf("dims%d/neox%v/long%v", dims, neox, long), func(t *testing.T) {
					rope := arch.Rope{Dims: dims, Base: 10000, NeoX: neox, Scale: 1, AttnFactor: 1}
					if long {
						rope.AttnFactor = 1.19
						rope.FreqFactors = make([]float32, dims/2)
						for i := range rope.FreqFactors {
							rope.FreqFactors[i] = 1 + float32(i)
						}
					}
					c := &arch.Config{HeadDim: dims + 4, Rope: rope}
					table, _ := newRope(c, arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1}, 4096)
					for _, pos := range []int{0, 1, 77, 4000} {
						x := make([]float32, dims+4)
						for i := range x {
							x[i] = float32(r.NormFloat64())
						}
						native, portable := slices.Clone(x), slices.Clone(x)
						table.apply(native, pos)
						nativeRope = false
						table.apply(portable, pos)
						nativeRope = true
						for i := range x {
							if math.Float32bits(native[i]) != math.Float32bits(portable[i]) {
								t.Fatalf("pos %d [%d]: native %g, portable %g", pos, i, native[i], portable[i])
							}
						}
						for i := dims; i < len(x); i++ {
							if native[i] != x[i] {
								t.Fatalf("pos %d: dim %d past the rotation changed", pos, i)
							}
						}
					}
				})
			}
		}
	}
}

// TestRopeTablesShared: layers that rotate alike share one table (its
// angles computed once per token); gemma3's local and global layers, with
// different bases, do not.
func TestRopeTablesShared(t *testing.T) {
	for _, c := range []struct {
		model  string
		tables int
	}{{"stories260K.gguf", 1}, {"synth-gemma3-F32.gguf", 2}} {
		m := loadShared(t, c.model)
		b, err := newFor(m, backend.Options{ContextSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		distinct := map[*ropeTable]bool{}
		for _, l := range b.ropes {
			if l != nil {
				distinct[l] = true
			}
		}
		if len(distinct) != c.tables {
			t.Errorf("%s: %d rope tables for %d layers, want %d", c.model, len(distinct), len(b.layers), c.tables)
		}
	}
}

// The row-batched forms (one native call for a token's heads) give the
// bits of the portable per-row loops: RMS norm with and without a weight,
// RoPE adjacent and NeoX with a partial rotation.
func TestRowsNativeMatchPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(55, 56))
	rows := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10)))
		}
		return x
	}
	same := func(what string, a, b []float32) {
		t.Helper()
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s [%d]: native %g, portable %g", what, i, a[i], b[i])
			}
		}
	}
	for _, width := range []int{8, 13, 64, 128} {
		for _, w := range [][]float32{nil, rows(width)} {
			x := rows(5 * width)
			native, portable := slices.Clone(x), slices.Clone(x)
			rmsNormRows(native, width, w, 1e-6)
			nativeNorm = false
			rmsNormRows(portable, width, w, 1e-6)
			nativeNorm = true
			same(fmt.Sprintf("norm width %d weighted %v", width, w != nil), native, portable)
		}
	}
	for _, neox := range []bool{false, true} {
		for _, dims := range []int{16, 64} {
			c := &arch.Config{HeadDim: 64, Rope: arch.Rope{Dims: dims, Base: 10000, NeoX: neox, Scale: 1, AttnFactor: 1}}
			table, _ := newRope(c, arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1}, 4096)
			x := rows(6 * 64)
			native, portable := slices.Clone(x), slices.Clone(x)
			table.applyRows(native, 64, 301)
			nativeRope = false
			table.applyRows(portable, 64, 301)
			nativeRope = true
			same(fmt.Sprintf("rope neox %v dims %d", neox, dims), native, portable)
		}
	}
}

// newRope is the rotation of layer lc for a context of ctx positions
// (which picks LongRoPE's factor set), as the plan resolves it
// (plan.Rotation); ok is false on a NoPE layer. Tests build tables this way.
func newRope(c *arch.Config, lc arch.LayerConfig, ctx int) (*ropeTable, bool) {
	r := c.Rope
	if !lc.Rope {
		return nil, false
	}
	dims := lc.RopeDims
	if dims == 0 {
		dims = r.Dims // a LayerConfig made by hand, not by arch.Load
	}
	rot := plan.Rotation{Dims: dims, NeoX: r.NeoX, Base: lc.RopeBase, Scale: lc.RopeScale, AttnFactor: r.AttnFactor, Factors: r.Factors(ctx), YaRN: r.YaRN}
	if lc.NoRopeFactors {
		rot.Factors = nil
	}
	return ropeFrom(rot), true
}
