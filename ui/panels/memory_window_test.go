package panels

import (
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// With sliding-window layers the formula counts their window, not the
// context, and agrees with what the backend allocated (gemma3's synth
// shape: 1 global layer, 5 local layers of window 8).
func TestMemoryLinesWindowedFormula(t *testing.T) {
	st := asciiStyles()
	info := engine.ModelInfo{Layers: 6, KVHeads: 2, HeadDim: 128, KVType: "f16", ContextSize: 512}
	stats := engine.Stats{ContextSize: 512, KVAllocated: (1*512 + 5*8) * 2 * 128 * 2 * 2, KVPerToken: 6 * 1024,
		KVWindows: []engine.KVWindow{{Layers: 5, Window: 8}}}
	text := strings.Join(MemoryLines(st, Memory{Info: info, Stats: stats}, 52), "\n")
	for _, want := range []string{"(1 layer × 512 ctx", "+ 5 layers × 8 window)", "× 2 kv heads", "= 565,248 B ✓"} {
		if !strings.Contains(text, want) {
			t.Errorf("memory panel lacks %q:\n%s", want, text)
		}
	}
}

func TestCounted(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 layers"}, {1, "1 layer"}, {2, "2 layers"}} {
		if got := counted(tc.n, "layer"); got != tc.want {
			t.Errorf("counted(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
