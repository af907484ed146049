package panels

import (
	"context"
	"strings"
	"testing"

	"vkchat/ui/termtext"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
)

// TestMemoryGemma4MoE: the memory panel of a real Gemma 4 26B-A4B-shaped
// session (synth-gemma4moe: 4 sliding layers of 2 KV heads × 32, 2 full
// layers of 1 × 64 without attn_v, experts beside every dense FFN) names
// both kinds of layer in its KV formula, which adds up to what the CPU
// backend allocated, and says that the dense FFNs are read by every
// token beside the 2 of 4 experts.
func TestMemoryGemma4MoE(t *testing.T) {
	s, err := engine.Load(context.Background(), testenv.Model(t, "2026b/synth-gemma4moe-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mem := Memory{Info: s.Info(), Stats: s.Stats()}
	flat := strings.Join(strings.Fields(strings.Join(MemoryLines(asciiStyles(), mem, 60), "\n")), " ")
	for _, want := range []string{
		// ✓: the formula's total is what the backend allocated
		"2 layers × 512 ctx × 1 kv × 64 hd", "4 layers × 8 window × 2 kv × 32 hd", "= " + ExactBytes(mem.Stats.KVAllocated) + " ✓",
		"6 layers × 2 of 4 experts", "attention, dense FFNs, norms, routers and embeddings", ExactBytes(mem.Stats.WeightsActive),
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in the memory panel:\n%s", want, flat)
		}
	}
}

// TestRouterGatingGemma4MoE: the router panel says the routing rule the
// engine reports (for gemma4moe: what the router reads, the per-expert
// output scales, the dense FFN beside) above the layers when the rows
// allow it, whole and within the width, and leaves it out rather than
// drop a layer's row when they do not; a rule-less Router is unchanged.
func TestRouterGatingGemma4MoE(t *testing.T) {
	s, err := engine.Load(context.Background(), testenv.Model(t, "2026b/synth-gemma4moe-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gating := s.Info().Gating
	for _, want := range []string{"softmax → top-k → renormalize", "router reads rms(x)/√256 ⊙ its scale", "outputs × a per-expert scale", "beside a dense FFN"} {
		if !strings.Contains(gating, want) {
			t.Errorf("ModelInfo.Gating %q lacks %q", gating, want)
		}
	}
	var layers []engine.Routing
	for i := 0; i < 6; i++ {
		layers = append(layers, engine.Routing{Experts: []int32{int32(i % 4), int32((i + 1) % 4)}, Weights: []float32{0.6, 0.4}})
	}
	st := asciiStyles()
	r := Router{Title: "step 1", Experts: 4, Layers: layers, Gating: gating}
	plain := r
	plain.Gating = ""
	for _, c := range []struct {
		width, rows int
		shown       bool
	}{{40, 20, true}, {24, 20, true}, {40, 8, false}, {40, 6, false}} {
		lines := RouterLines(st, r, c.width, c.rows)
		text := strings.Join(lines, "\n")
		flat := strings.Join(strings.Fields(text), " ")
		if got := strings.Contains(flat, "per-expert scale"); got != c.shown {
			t.Errorf("width %d rows %d: rule shown %v, want %v:\n%s", c.width, c.rows, got, c.shown, text)
		}
		if !strings.Contains(text, "L5") {
			t.Errorf("width %d rows %d: a layer's row was dropped:\n%s", c.width, c.rows, text)
		}
		for _, l := range lines {
			if termtext.Width(l) > c.width {
				t.Errorf("width %d: row %q is %d cells", c.width, l, termtext.Width(l))
			}
		}
		if !c.shown && text != strings.Join(RouterLines(st, plain, c.width, c.rows), "\n") {
			t.Errorf("width %d rows %d: the panel changed without room for the rule", c.width, c.rows)
		}
	}
}
