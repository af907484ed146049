package panels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
)

// mlaMemory is synth-deepseek2-F32's memory at a context of 512 with an
// F16 cache: 4 latent-attention layers caching one row of 64 latent + 16
// RoPE values a position (327,680 B, what the CPU backend allocates:
// TestMLAKVTypes), 4 heads of 48 key and 32 value values as plain
// multi-head attention would cache them.
func mlaMemory() Memory {
	info := engine.ModelInfo{Arch: "deepseek2", Layers: 4, KVHeads: 1, HeadDim: 48, KVType: "f16", ContextSize: 512,
		KVLayout: []engine.KVGroup{{Layers: 4, Positions: 512, KVHeads: 1, HeadDim: 80}},
		MLA:      &engine.MLAInfo{Latent: 64, Rope: 16, Heads: 4, Key: 48, Value: 32}}
	return Memory{Info: info, Stats: engine.Stats{ContextUsed: 21, ContextSize: 512, KVPerToken: 4 * 80 * 2, KVUsed: 21 * 640,
		KVAllocated: 512 * 640, Weights: 9_008_000, Scratch: 1_500_000}}
}

// TestMemoryMLA: the KV formula of a latent-attention model counts its
// one cached row (latent + rope, keys only) and adds up to what the
// backend allocated, and a row says what plain multi-head attention
// would take (4 heads × (48 + 32) values: 4× here).
func TestMemoryMLA(t *testing.T) {
	st := asciiStyles()
	text := strings.Join(strings.Fields(strings.Join(MemoryLines(st, mlaMemory(), 56), "\n")), " ")
	for _, want := range []string{"4 layers × 512 ctx × (64 latent + 16 rope) (K only: V = the latent) × 2 B f16 = 327,680 B ✓",
		"as MHA = 4 layers × 512 ctx × 4 heads × (48 K + 32 V) × 2 B = 1,310,720 B"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in %s", want, text)
		}
	}
	if strings.Contains(text, "2 (K,V)") || strings.Contains(text, "≠ allocated") {
		t.Errorf("the latent cache is counted as keys and values: %s", text)
	}
	mem := mlaMemory()
	if total, _, _ := KVFormula(mem.Info, 512); total != mem.Stats.KVAllocated {
		t.Errorf("KV formula %d B, allocated %d B", total, mem.Stats.KVAllocated)
	}
}

// TestMemoryMLAGolden pins the panel; regenerate with go test ./ui/panels
// -run TestMemoryMLAGolden -update.
func TestMemoryMLAGolden(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{40, 60} {
		box := Box(st, "Memory", MemoryLines(st, mlaMemory(), InnerWidth(w)), w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}
