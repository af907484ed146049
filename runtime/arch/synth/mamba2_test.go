package synth

import (
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// TestMamba2Synth: the synthetic Mamba2 hybrids have the declared layer
// patterns, Mamba2 shapes and routing (nemotron_h_moe's sigmoid rule,
// granite's experts as wide as feed_forward_length), and a shared expert
// of a width of its own (Shape.SharedFF) that the loader reads back.
func TestMamba2Synth(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	s := Shapes["tiny"]
	s.Layers = 8
	s.SharedFF = 64 // twice the experts' FF/4, as nemotron_h_moe's
	for _, c := range []struct{ arch, kinds string }{
		{"nemotron_h", "mamba2 ffn mamba2 attention mamba2 ffn mamba2 attention"},
		{"nemotron_h_moe", "mamba2 ffn mamba2 attention mamba2 ffn mamba2 attention"},
		{"granitehybrid", "mamba2 mamba2 attention mamba2 mamba2 attention mamba2 mamba2"},
	} {
		t.Run(c.arch, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := Write(path, s, Options{Arch: c.arch, Type: ggml.Q8_0, Vocab: vocab, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := arch.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for i := range m.Layers {
				kinds = append(kinds, m.Layers[i].Config.Kind.String())
			}
			if got := strings.Join(kinds, " "); got != c.kinds {
				t.Errorf("layer kinds %s, want %s", got, c.kinds)
			}
			if d := m.Mamba2; d != (arch.Mamba2Config{ConvKernel: 4, Inner: 128, State: 16, Groups: 2, Heads: 2}) {
				t.Errorf("Mamba2 shape %+v", d)
			}
			switch e := m.MoE; c.arch {
			case "nemotron_h_moe":
				if e.Gating != arch.GatingSigmoid || !e.Norm || e.Scale != 2.5 || m.Layers[1].Experts.SelectBias == nil || e.SharedFF != s.SharedFF {
					t.Errorf("routing %+v", e)
				}
			case "granitehybrid":
				if e.ExpertFF != s.FF || m.EmbedScale != 12 || m.Layers[0].Experts.Shared == nil {
					t.Errorf("experts %+v, embedding × %g", e, m.EmbedScale)
				}
			}
			checkRuns(t, m, 0)
		})
	}
}
