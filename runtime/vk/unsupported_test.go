package vk

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
)

// Models whose recipe has parts no shader computes yet are refused by name
// (needs no device); the others pass.
func TestUnsupportedRecipes(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"synth-qwen3-F32.gguf", nil},
		{"synth-gemma2-F32.gguf", nil},
		{"2026/synth-qwen3moe-F32.gguf", nil},
		{"2026/synth-qwen3moe-MXFP4_MOE.gguf", nil},
		{"2026/synth-gpt-oss-F32.gguf", nil},
		{"2026/synth-gpt-oss-MXFP4_MOE.gguf", nil},
		{"2026/synth-qwen35-F32.gguf", nil},
		{"2026/synth-qwen35moe-Q4_K_M.gguf", nil},
		{"2026/synth-lfm2-F32.gguf", nil},
		{"2026/synth-lfm2-Q4_K_M.gguf", nil},
		{"2026/synth-gemma4-F32.gguf", nil},
		{"2026b/synth-mistral3-F32.gguf", []string{"attention temperature tuning"}},
		{"2026b/synth-gemma4moe-F32.gguf", []string{"experts beside a dense FFN"}},
		{"2026b/synth-gemma4moe-Q4_K_M.gguf", []string{"experts beside a dense FFN"}},
		{"2026b/synth-nemotron_h-F32.gguf", []string{"Mamba2 mixer", "FFN alone", "ReLU²"}},
		{"2026b/synth-nemotron_h_moe-Q4_K_M.gguf", []string{"Mamba2 mixer", "mixture-of-experts gating sigmoid"}},
		{"2026b/synth-granitehybrid-F32.gguf", []string{"Mamba2 mixer"}},
		{"2026b/synth-deepseek2-F32.gguf", []string{"multi-head latent attention (MLA)", "--backend cpu"}},
		{"2026b/synth-deepseek2-Q4_K_M.gguf", []string{"multi-head latent attention (MLA)", "--backend cpu"}},
		// a gating no route kernel computes, and MXFP4 outside the banks
		{"2026/synth-gpt-oss-F32.gguf/gating", []string{"mixture-of-experts gating", "MXFP4 weights outside expert banks"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			file, edited := strings.CutSuffix(c.file, "/gating")
			m := loadModel(t, testenv.Model(t, file))
			if edited {
				m.MoE.Gating = 99
				m.Layers[0].Wo.Type = ggml.MXFP4
			}
			err := refuseUnsupported(m)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, backend.ErrUnsupported) {
				t.Fatalf("error %v, want ErrUnsupported", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}
