package vk

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
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
		{"2026/synth-gpt-oss-F32.gguf", []string{"mixture-of-experts", "YaRN", "SwiGLU", "sinks", "output bias"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			m := loadModel(t, testenv.Model(t, c.file))
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
