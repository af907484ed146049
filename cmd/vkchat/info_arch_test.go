package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// TestInfoShowsArchFeatures: `vkchat info` names each architecture's
// features on the shared synth files, and the KV cache with its window.
func TestInfoShowsArchFeatures(t *testing.T) {
	cases := []struct {
		model string
		want  []string
		not   []string
	}{
		{"synth-gemma3-F32.gguf", []string{
			"block:           pre-norm, post-norm, Q/K RMSNorm per head [128]; FFN gelu-tanh-gated",
			"heads:           4 × head dim 128 = 512 ≠ embd 256",
			"sliding window:  8 positions on layers 0-4 (RoPE base 10000, scale 1); full attention on 5",
			"scales:          embeddings ×16, attention ×0.0883883 on Q",
			"KV cache:        f16: (1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 565248 B",
			"positions ×0.125",
		}, []string{"soft-caps", "no RoPE"}},
		{"synth-gemma2-F32.gguf", []string{"soft-caps:       attention 4·tanh(s/4), final logits 8·tanh(x/8)", "on layers 0 "}, nil},
		{"synth-smollm3-F32.gguf", []string{"no RoPE:         layers 3", "block:           pre-norm; FFN silu-gated"}, []string{"sliding window"}},
		{"synth-olmo2-F32.gguf", []string{"block:           post-norm, Q/K RMSNorm over the full width [256]/[128]; FFN silu-gated"}, nil},
		{"synth-granite-F32.gguf", []string{"scales:          embeddings ×12, residual branches ×0.22, attention ×0.0078125 on scores, logits ×0.125"}, nil},
		{"synth-phi3-F32.gguf", []string{"attention ×0.125 on Q"}, []string{"sliding window"}},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			var out bytes.Buffer
			if err := runInfo(context.Background(), []string{"--ctx", "512", testenv.Model(t, c.model)}, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("missing %q in\n%s", w, out.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("unexpected %q in\n%s", n, out.String())
				}
			}
		})
	}
}
