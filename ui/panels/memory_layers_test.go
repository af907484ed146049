package panels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
)

// gemma4Memory is a Gemma 4 E2B's memory: caches of two widths, layers
// sharing caches, and the per-layer embedding table.
func gemma4Memory() Memory {
	info := engine.ModelInfo{Layers: 35, KVHeads: 1, HeadDim: 512, KVType: "f16", ContextSize: 2048,
		KVLayout: []engine.KVGroup{
			{Layers: 4, Positions: 2048, KVHeads: 1, HeadDim: 512},
			{Layers: 16, Positions: 512, Window: 512, KVHeads: 1, HeadDim: 256},
		},
		KVShared: 15,
		PLE:      engine.PLEInfo{Width: 256, Layers: 35, Tokens: 262144, Type: "Q8_0", RowBytes: 9520},
	}
	st := engine.Stats{ContextSize: 2048, KVPerToken: (4*512 + 16*256) * 4, Weights: 3_105_000_000, Scratch: 12_582_912,
		KVAllocated: (4*2048*512 + 16*512*256) * 4, KVWindows: []engine.KVWindow{{Layers: 16, Window: 512}}}
	return Memory{Info: info, Stats: st}
}

// The goldens are regenerated with go test ./ui/panels -run TestMemoryGemma4Golden -update.
func TestMemoryGemma4Golden(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{40, 60} {
		lines := MemoryLines(st, gemma4Memory(), InnerWidth(w))
		all := strings.Join(lines, "\n")
		// the formula's total is the allocation; the shared layers and the
		// table's exact size are named
		for _, want := range []string{"✓", "15 KV-shared layers", "2,495,610,880 B"} {
			if !strings.Contains(all, want) {
				t.Errorf("width %d: %q missing from\n%s", w, want, all)
			}
		}
		box := Box(st, "Memory", lines, w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}
