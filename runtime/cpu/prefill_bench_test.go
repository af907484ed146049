package cpu

import (
	"context"
	"path/filepath"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// BenchmarkPrefill measures a 64-token prompt pass (one batch) on the
// synthetic 110M model in Q4_0, in tokens per second.
func BenchmarkPrefill(b *testing.B) {
	vocab, err := gguf.Open(testenv.Shared(b, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer vocab.Close()
	path := filepath.Join(b.TempDir(), "110m-q4_0.gguf")
	if err := synth.Write(path, synth.Shapes["110m"], synth.Options{Type: ggml.Q4_0, Vocab: vocab, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		b.Fatal(err)
	}
	be, err := New(m, backend.Options{ContextSize: 128})
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
