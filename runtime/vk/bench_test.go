package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// BenchmarkMatvec times the decode mat-vec on the 110M model's shapes and
// reports the weight bandwidth (go test -bench Matvec ./runtime/vk).
func BenchmarkMatvec(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewSource(1))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.F16, ggml.Q4_K, ggml.Q6_K} {
		for _, sh := range [][2]int{{2048, 768}, {768, 2048}, {32000, 768}} {
			rows, cols := sh[0], sh[1]
			b.Run(fmt.Sprintf("%s/%dx%d", typ, rows, cols), func(b *testing.B) {
				w := randomWeights(b, typ, rows, cols, rng)
				m, err := d.uploadMatrix("w", typ, rows, cols, w)
				if err != nil {
					b.Fatal(err)
				}
				x, _ := d.NewBuffer("x", uint64(4*cols), vulkan.MemDevice)
				y, _ := d.NewBuffer("y", uint64(4*rows), vulkan.MemDevice)
				step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
				binary.LittleEndian.PutUint32(step.Mapped(), 1)
				r, err := d.NewRecorder(0)
				if err != nil {
					b.Fatal(err)
				}
				r.Begin()
				if err := d.matvec(r, matvecOp{label: "mv", m: m, x: x, xstride: cols, y: y, ystride: rows, tokens: 1, step: step}); err != nil {
					b.Fatal(err)
				}
				r.End()
				if err := r.Run(); err != nil { // compiles on llvmpipe
					b.Fatal(err)
				}
				b.SetBytes(int64(m.Bytes))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := r.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReadBandwidth is the bound the mat-vec kernels are judged by.
func BenchmarkReadBandwidth(b *testing.B) {
	d := testDevice(b)
	for i := 0; i < b.N; i++ {
		texel, ssbo, err := d.ReadBandwidth(64 << 20)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(texel/1e9, "texel-GB/s")
		b.ReportMetric(ssbo/1e9, "ssbo-GB/s")
	}
}
