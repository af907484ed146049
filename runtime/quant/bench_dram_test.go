package quant

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// dramBytes is well beyond any last-level cache, so products over that much
// weight data run at memory speed, as decode does.
const dramBytes = 256 << 20

var readBound = sync.OnceValue(func() float64 { return simd.ReadBandwidth(runtime.GOMAXPROCS(0), 5) })

// sink keeps the checksums alive so the reads cannot be optimized away.
var sink atomic.Uint64

// BenchmarkRead is the machine's streaming read bandwidth over 256 MiB with
// all cores, the bound the DRAM product benchmarks are judged against.
func BenchmarkRead(b *testing.B) {
	buf := make([]byte, dramBytes)
	for i := range buf {
		buf[i] = byte(i)
	}
	threads := runtime.GOMAXPROCS(0)
	part := len(buf) / threads &^ 127
	b.SetBytes(int64(threads * part))
	for b.Loop() {
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func(p []byte) {
				defer wg.Done()
				sink.Add(simd.ReadSum(p))
			}(buf[t*part : (t+1)*part])
		}
		wg.Wait()
	}
}

// BenchmarkMatVecDRAM runs decode-shaped products (2048 columns, 2048 rows)
// over 256 MiB of distinct weights per type, packed as the backend packs
// them, so they stream from memory, and
// reports the fraction of the measured read bandwidth (BenchmarkRead) they
// reach: 1.0 is as fast as reading the weights can be.
func BenchmarkMatVecDRAM(b *testing.B) {
	bound := readBound()
	r := rand.New(rand.NewPCG(4, 4))
	for _, typ := range allTypes {
		b.Run(typ.String(), func(b *testing.B) {
			one := randomMatrix(r, typ, 2048, 2048)
			ms := make([]Matrix, max(1, dramBytes/len(one.Data)))
			for i := range ms {
				ms[i] = one
				ms[i].Data = append([]byte(nil), one.Data...)
			}
			free, _ := Pack(ms) // as the CPU backend does at load
			defer free()
			x := randVec(r, one.Cols)
			dst := make([]float32, one.Rows)
			b.SetBytes(int64(len(one.Data)))
			b.ResetTimer()
			i := 0
			for b.Loop() {
				MatVec(dst, ms[i%len(ms)], x)
				i++
			}
			gbs := float64(b.N) * float64(len(one.Data)) / b.Elapsed().Seconds()
			b.ReportMetric(gbs/bound, "of_bound")
		})
	}
}

// BenchmarkMatMulPrefill is a 64-token prefill batch through 2048x2048
// weights (the engine's batch size), in tokens per second per matrix.
func BenchmarkMatMulPrefill(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	const n = 64
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			m := randomMatrix(r, typ, 2048, 2048)
			free, _ := Pack([]Matrix{m})
			defer free()
			x := randVec(r, n*m.Cols)
			dst := make([]float32, n*m.Rows)
			for b.Loop() {
				MatMul(dst, m, x, n)
			}
			b.ReportMetric(float64(b.N)*n*2048*2048/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

// BenchmarkDecodeShapes runs the products of a decode step by shape, Q4_0
// packed as the CPU backend packs it and streamed from memory as in
// BenchmarkMatVecDRAM: the 1B's FFN matrices, and the MoE bench shape's
// (issue 24) attention product and expert groups (the k=4 chosen experts'
// gate/up pairs as one MatMuls, their downs as one MatMulsEach), to see
// where the MoE step's bytes per second fall behind the 1B's.
func BenchmarkDecodeShapes(b *testing.B) {
	bound := readBound()
	r := rand.New(rand.NewPCG(5, 5))
	for _, sh := range []struct {
		name       string
		rows, cols int
		parts      int
		each       bool // each part its own x (MatMulsEach)
	}{
		{"1b-ffn-up-2048", 5632, 2048, 1, false},
		{"1b-ffn-down-5632", 2048, 5632, 1, false},
		{"moe-qkv-1536x1024", 1536, 1024, 1, false},
		{"moe-experts-gateup-8x512x1024", 512, 1024, 8, false},
		{"moe-experts-down-4x1024x512", 1024, 512, 4, true},
	} {
		b.Run(sh.name, func(b *testing.B) {
			one := randomMatrix(r, ggml.Q4_0, sh.rows, sh.cols)
			ms := make([]Matrix, max(1, dramBytes/len(one.Data)/sh.parts)*sh.parts)
			for i := range ms {
				ms[i] = one
				ms[i].Data = append([]byte(nil), one.Data...)
			}
			free, _ := Pack(ms)
			defer free()
			x := randVec(r, one.Cols)
			xs := make([][]float32, sh.parts)
			dsts := make([][]float32, sh.parts)
			for i := range dsts {
				dsts[i], xs[i] = make([]float32, one.Rows), x
			}
			bytes := len(one.Data) * sh.parts
			b.SetBytes(int64(bytes))
			b.ResetTimer()
			i := 0
			for b.Loop() {
				g := ms[i*sh.parts%len(ms):][:sh.parts]
				if sh.each {
					MatMulsEach(dsts, g, xs, 1)
				} else {
					MatMuls(dsts, g, x, 1)
				}
				i++
			}
			b.ReportMetric(float64(b.N)*float64(bytes)/b.Elapsed().Seconds()/bound, "of_bound")
		})
	}
}
