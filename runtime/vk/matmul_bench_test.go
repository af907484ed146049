package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"syscall"
	"testing"
	"time"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// cpuTime is the process's user and system time: on lavapipe the device is
// the CPU, and a machine shared with other work stretches wall time but
// not this.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPrefillProduct times one prefill chunk's product (64 tokens) on
// the 110M and 1B shapes with the mat-vec (8 tokens per pass) and with the
// tiled product, reporting GFLOP/s of CPU time as well as of wall time
// (go test -bench PrefillProduct -benchtime 3x ./runtime/vk).
func BenchmarkPrefillProduct(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewSource(1))
	const tokens = prefillChunk
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_K} {
		for _, sh := range [][2]int{{2048, 768}, {2048, 2048}} {
			rows, cols := sh[0], sh[1]
			w := randomWeights(b, typ, rows, cols, rng)
			m, err := d.uploadMatrix("w", typ, rows, cols, w)
			if err != nil {
				b.Fatal(err)
			}
			x, _ := d.NewBuffer("x", uint64(4*cols*tokens), vulkan.MemDevice)
			x.Write(0, f32bytes(randomVec(cols*tokens, rng)))
			y, _ := d.NewBuffer("y", uint64(4*rows*tokens), vulkan.MemDevice)
			xq, _ := d.NewBuffer("xq", uint64(4*tokens*xqBound(cols)), vulkan.MemDevice)
			step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
			binary.LittleEndian.PutUint32(step.Mapped(), tokens)
			for _, kind := range []string{"matvec", "matmul"} {
				b.Run(fmt.Sprintf("%s/%dx%d/%s", typ, rows, cols, kind), func(b *testing.B) {
					op := matvecOp{label: kind, m: m, x: x, xstride: cols, y: y, ystride: rows, tokens: tokens, step: step}
					if kind == "matmul" {
						op.xq = xq
					}
					r, err := d.NewRecorder(0)
					if err != nil {
						b.Fatal(err)
					}
					r.Begin()
					if err := d.matvec(r, op); err != nil {
						b.Fatal(err)
					}
					r.End()
					if err := r.Run(); err != nil { // compiles on llvmpipe
						b.Fatal(err)
					}
					b.ResetTimer()
					c0, t0 := cpuTime(), time.Now()
					for i := 0; i < b.N; i++ {
						if err := r.Run(); err != nil {
							b.Fatal(err)
						}
					}
					flop := 2 * float64(rows) * float64(cols) * tokens * float64(b.N)
					b.ReportMetric(flop/float64(cpuTime()-c0), "GFLOP/cpu-s")
					b.ReportMetric(flop/float64(time.Since(t0)), "GFLOP/s")
				})
			}
		}
	}
}
