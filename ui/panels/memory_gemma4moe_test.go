package panels

import (
	"context"
	"strings"
	"testing"

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
