package vk

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
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
		{"2026b/synth-mistral3-F32.gguf", nil},
		{"2026b/synth-mistral3-Q4_K_M.gguf", nil},
		{"2026b/synth-nemotron_h-F32.gguf", nil},
		{"2026b/synth-nemotron_h-Q4_K_M.gguf", nil},
		{"2026b/synth-granitehybrid-F32.gguf", nil},
		{"2026b/synth-granitehybrid-Q4_K_M.gguf", nil},
		{"2026b/synth-nemotron_h_moe-F32.gguf", nil},
		{"2026b/synth-nemotron_h_moe-Q4_K_M.gguf", nil},
		// experts beside a dense FFN: the router's own input, the fused
		// gate|up bank, the per-expert scales, the post-norm and the add
		{"2026b/synth-gemma4moe-F32.gguf", nil},
		{"2026b/synth-gemma4moe-Q4_K_M.gguf", nil},
		// latent attention (mla.go) and sigmoid routing within groups
		{"2026b/synth-deepseek2-F32.gguf", nil},
		{"2026b/synth-deepseek2-Q4_K_M.gguf", nil},
		// a gating no route kernel computes; MXFP4 outside the banks
		{"2026/synth-gpt-oss-F32.gguf/gating", []string{"layer 0: mixture-of-experts gating"}},
		{"2026/synth-gpt-oss-F32.gguf/mxfp4", []string{"MXFP4 weights outside expert banks"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			file, edit, edited := strings.Cut(c.file, ".gguf/")
			if edited {
				file += ".gguf"
			}
			m := loadModel(t, testenv.Model(t, file))
			switch edit {
			case "gating":
				m.MoE.Gating = 99
			case "mxfp4":
				m.Layers[0].Wo.Type = ggml.MXFP4
			}
			_, err := check(mustPlan(t, m, 64), backend.Options{ContextSize: 64})
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

// newOp is an op kind this backend has never heard of, as one added to the
// plan for a new family would be.
type newOp struct{ plan.Embed }

// An op kind without a kernel here, or an op in a form no kernel computes,
// is refused by name with ErrUnsupported before a device is opened.
func TestUnsupportedOps(t *testing.T) {
	m := loadModel(t, testenv.Model(t, "synth-qwen3-F32.gguf"))
	for _, c := range []struct {
		name string
		edit func(p *plan.Plan)
		want string
	}{
		{"new op kind", func(p *plan.Plan) { p.Layers[1].Ops = append(p.Layers[1].Ops, newOp{}) }, "layer 1: op vk.newOp has no Vulkan kernel"},
		{"lone GLU", func(p *plan.Plan) { p.Layers[0].Ops = append([]plan.Op{plan.GLU{Width: 8}}, p.Layers[0].Ops...) }, "layer 0: plan.GLU outside the run of ops"},
		{"norm of the stream in place", func(p *plan.Plan) {
			p.Head = append([]plan.Op{plan.Norm{In: plan.X, Out: plan.X, Width: p.Embd, Row: p.Embd}}, p.Head...)
		}, "head: a norm of x into x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, m, 64)
			c.edit(p)
			_, err := check(p, backend.Options{ContextSize: 64})
			if !errors.Is(err, backend.ErrUnsupported) {
				t.Fatalf("error %v, want ErrUnsupported", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}
