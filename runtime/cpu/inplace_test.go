package cpu

import (
	"context"
	"math"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/simd"
)

// TestInPlaceAttentionMatchesPortable runs a prompt in two batches, decode
// steps and a rewind with the F16 cache read in place (full-attention
// layers) and with the portable attention over widened copies, and needs
// the same logits bit for bit: llama (every layer in place), gemma3
// (window layers beside full ones) and gemma2 (soft-capped: none in
// place).
func TestInPlaceAttentionMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	for _, name := range []string{"stories260K.gguf", "synth-gemma3-F32.gguf", "synth-gemma2-F32.gguf"} {
		t.Run(name, func(t *testing.T) {
			m := loadShared(t, name)
			tokens := make([]int32, 50)
			for i := range tokens {
				tokens[i] = int32((i*37 + 11) % m.Vocab)
			}
			run := func() []float32 {
				b, err := newFor(m, backend.Options{ContextSize: 96, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				if b.inPlace(0) != (nativeAttention && m.AttnSoftcap == 0 && b.layers[0].att.Window == 0) {
					t.Fatalf("inPlace(0) = %v with nativeAttention %v", b.inPlace(0), nativeAttention)
				}
				var all []float32
				bg := context.Background()
				for _, step := range []struct{ from, to int }{{0, 30}, {30, 40}, {40, 41}, {41, 42}, {35, 50}} {
					out, err := b.Forward(bg, tokens[step.from:step.to], step.from, true)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, out...)
				}
				return all
			}
			inPlace := run()
			nativeAttention = false
			portable := run()
			nativeAttention = true
			for i := range inPlace {
				if math.Float32bits(inPlace[i]) != math.Float32bits(portable[i]) {
					t.Fatalf("logit %d: in place %g, portable %g", i, inPlace[i], portable[i])
				}
			}
		})
	}
}
