package quant

import (
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
)

// BenchmarkMatVec measures one 2048x2048 product per type; the reported
// throughput is weight bytes read per second.
func BenchmarkMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, typ := range allTypes {
		b.Run(typ.String(), func(b *testing.B) {
			m := randomMatrix(r, typ, 2048, 2048)
			x := randVec(r, m.Cols)
			dst := make([]float32, m.Rows)
			b.SetBytes(int64(len(m.Data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				MatVec(dst, m, x)
			}
		})
	}
}

// BenchmarkMatMul is a 32-token prefill batch through a 2048x2048 weight.
func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	const n = 32
	for _, typ := range allTypes {
		b.Run(typ.String(), func(b *testing.B) {
			m := randomMatrix(r, typ, 2048, 2048)
			x := randVec(r, n*m.Cols)
			dst := make([]float32, n*m.Rows)
			b.SetBytes(int64(len(m.Data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				MatMul(dst, m, x, n)
			}
		})
	}
}

// BenchmarkMatVecSmall is a stories260K-sized product (64x64), which must
// stay on the calling goroutine and allocate nothing.
func BenchmarkMatVecSmall(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	m := randomMatrix(r, allTypes[0], 64, 64)
	x := randVec(r, m.Cols)
	dst := make([]float32, m.Rows)
	b.ReportAllocs()
	for b.Loop() {
		MatVec(dst, m, x)
	}
}

// BenchmarkMXFP4 is one decode product through a gpt-oss-sized expert
// matrix (2880x2880, MXFP4) on each path: the portable Go kernel, the
// native one on the file's layout, and the native one on the packed copy
// the CPU backend makes at load. Throughput is weight bytes per second.
func BenchmarkMXFP4(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	m := randomMatrix(r, ggml.MXFP4, 2880, 2880)
	x := randVec(r, m.Cols)
	dst := make([]float32, m.Rows)
	run := func(b *testing.B) {
		b.SetBytes(int64(len(m.Data)))
		b.ReportAllocs()
		for b.Loop() {
			MatVec(dst, m, x)
		}
	}
	b.Run("portable", func(b *testing.B) { withPortable(func() { run(b) }) })
	b.Run("native", run)
	b.Run("packed", func(b *testing.B) {
		free, _ := Pack([]Matrix{m})
		defer free()
		run(b)
	})
}
