package cpu

import (
	"context"
	"testing"

	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
)

// BenchmarkPrefill measures a 64-token prompt pass (one batch) on the
// synthetic 110M model in Q4_0, in tokens per second.
func BenchmarkPrefill(b *testing.B) {
	m := loadSynth(b, synth.Shapes["110m"], synth.Options{Type: ggml.Q4_0, Seed: 1})
	be, err := newFor(m, backend.Options{ContextSize: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	const n = 64
	tokens := make([]int32, n)
	for i := range tokens {
		tokens[i] = int32(1 + i*37%(m.Vocab-1))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := be.Forward(context.Background(), tokens, 0, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "tok/s")
}
