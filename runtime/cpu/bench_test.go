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

// BenchmarkDecode measures single-token decode (tok/s) on stories260K and
// on the synthetic 110M shape in Q4_0 as llama, qwen3 and gemma3 (window
// 256: its local layers wrap their ring only past 256), over the first 128
// positions.
func BenchmarkDecode(b *testing.B) {
	b.Run("stories260K", func(b *testing.B) {
		benchDecode(b, testenv.Model(b, "stories260K.gguf"))
	})
	for _, arch := range []string{"llama", "qwen3", "gemma3"} {
		name := "110M-Q4_0"
		if arch != "llama" {
			name = arch + "-" + name
		}
		b.Run(name, func(b *testing.B) {
			benchDecode(b, writeSynth(b, synth.Shapes["110m"], synth.Options{Arch: arch, Type: ggml.Q4_0, Seed: 1}))
		})
	}
	// the MoE bench shape (issue 24): 0.9B parameters, 0.2B active
	b.Run("qwen3moe-bench-Q4_0", func(b *testing.B) {
		benchDecode(b, writeSynth(b, synth.Shapes["moe"], synth.Options{Arch: "qwen3moe", Type: ggml.Q4_0, Seed: 1}))
	})
}

// writeSynth writes a synth model of shape s on the llama-spm vocabulary
// into the test's temporary directory and returns its path.
func writeSynth(tb testing.TB, s synth.Shape, o synth.Options) string {
	tb.Helper()
	vocab, err := gguf.Open(testenv.Shared(tb, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		tb.Fatal(err)
	}
	defer vocab.Close()
	o.Vocab = vocab
	path := filepath.Join(tb.TempDir(), "synth.gguf")
	if err := synth.Write(path, s, o); err != nil {
		tb.Fatal(err)
	}
	return path
}

func benchDecode(b *testing.B, path string) {
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		b.Fatal(err)
	}
	const window = 128
	be, err := newFor(m, backend.Options{ContextSize: window})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// One untimed pass over the window first: a MoE model packs each
	// expert on its first use (expertPacks), which a chat pays once and a
	// short timed run would otherwise mostly measure.
	for i := 0; i < window; i++ {
		if _, err := be.Forward(ctx, []int32{int32((i * 7919) % m.Vocab)}, i, false); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(m.ActiveWeightBytes())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		logits, err := be.Forward(ctx, []int32{int32(i % m.Vocab)}, i%window, false)
		if err != nil {
			b.Fatal(err)
		}
		be.Recycle(logits) // as the chat hands each step's back
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
