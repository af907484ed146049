package cpu

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// loadSynth writes the synthetic model of shape s and loads it; the file
// stays open (the model reads its weights from it) until the test ends.
func loadSynth(tb testing.TB, s synth.Shape, o synth.Options) *arch.Model {
	tb.Helper()
	return loadFile(tb, writeSynth(tb, s, o))
}

// loadFile opens and loads a GGUF model, closing the file when the test ends.
func loadFile(tb testing.TB, path string) *arch.Model {
	tb.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func benchDecode(b *testing.B, path string) {
	m := loadFile(b, path)
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

// BenchmarkDecodeDepthKV times a decode step at depth 4096 on the 110M
// shape with an f16 and a q8_0 cache in one process, alternating blocks of
// 16 steps between the two (each block rewinds to the same positions), so
// that a shared machine's load falls on both alike (issue 43: q8_0 must
// not be slower than f16). It reports each cache's median block in ms per
// step, and their ratio.
func BenchmarkDecodeDepthKV(b *testing.B) {
	const depth, block = 4096, 16
	m := loadSynth(b, synth.Shapes["110m"], synth.Options{Arch: "llama", Type: ggml.Q4_0, Seed: 1})
	ctx := context.Background()
	kinds := []backend.KVType{backend.KVF16, backend.KVQ8_0}
	bes := make([]*Backend, len(kinds))
	prompt := make([]int32, depth)
	for i := range prompt {
		prompt[i] = int32((i*7919 + 3) % m.Vocab)
	}
	for j, kv := range kinds {
		be, err := newFor(m, backend.Options{ContextSize: depth + block, KVType: kv})
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		for p := 0; p < depth; p += maxBatch {
			if _, err := be.Forward(ctx, prompt[p:p+maxBatch], p, false); err != nil {
				b.Fatal(err)
			}
		}
		bes[j] = be
	}
	times := make([][]float64, len(kinds))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, be := range bes {
			start := time.Now()
			for s := 0; s < block; s++ {
				logits, err := be.Forward(ctx, []int32{int32((s*31 + 7) % m.Vocab)}, depth+s, false)
				if err != nil {
					b.Fatal(err)
				}
				be.Recycle(logits)
			}
			times[j] = append(times[j], time.Since(start).Seconds()*1000/block)
		}
	}
	med := make([]float64, len(kinds))
	for j, kv := range kinds {
		slices.Sort(times[j])
		med[j] = times[j][len(times[j])/2]
		b.ReportMetric(med[j], "ms/step-"+string(kv))
	}
	b.ReportMetric(med[0]/med[1], "q8_0-speedup")
}
