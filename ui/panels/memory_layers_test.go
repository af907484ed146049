package panels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

// gemma4Memory is a Gemma 4 E2B's memory: caches of two widths, layers
// sharing caches, and the per-layer embedding table.
func gemma4Memory() Memory {
	info := engine.ModelInfo{Layers: 35, KVHeads: 1, HeadDim: 512, KVType: "f16", ContextSize: 2048,
		KVLayout: []engine.KVGroup{
			{Layers: 4, Positions: 2048, KVHeads: 1, HeadDim: 512},
			{Layers: 16, Positions: 512, Window: 512, KVHeads: 1, HeadDim: 256},
		},
		KVShared:  15,
		KVSharing: e2bSharing(),
		PLE:       engine.PLEInfo{Width: 256, Layers: 35, Tokens: 262144, Type: "Q8_0", RowBytes: 9520},
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

// e2bSharing is which cache each of a Gemma 4 E2B's last 15 layers reads:
// the last full layer's (19) for the full ones, the last sliding one's
// (18) for the rest.
func e2bSharing() []engine.KVShare {
	var out []engine.KVShare
	for l := 20; l < 35; l++ {
		src := 18
		if l%5 == 4 {
			src = 19
		}
		out = append(out, engine.KVShare{Layer: l, Source: src})
	}
	return out
}

// TestMemorySharedLayersRow: the KV-shared layers are a row of the memory
// panel at every detail (the side column drops the formulas for room, not
// this), naming the layers and the caches they read as vkchat info does,
// as many as fit the row and "…" for the rest. Issue 45, item 14.
func TestMemorySharedLayersRow(t *testing.T) {
	st := asciiStyles()
	mem := gemma4Memory()
	for _, w := range []int{40, 60, 140} {
		for _, d := range []MemoryDetail{MemoryFull, MemoryKV, MemoryRows} {
			var shared []string
			for _, l := range MemoryLinesDetail(st, mem, InnerWidth(w), d) {
				if strings.HasPrefix(l, "KV shared ") {
					shared = append(shared, l)
				}
			}
			if len(shared) != 1 {
				t.Fatalf("width %d detail %d: %d KV shared rows", w, d, len(shared))
			}
			row := shared[0]
			if termtext.Width(row) > InnerWidth(w) {
				t.Errorf("width %d: the row is %d cells, wider than the panel: %q", w, termtext.Width(row), row)
			}
			if !strings.Contains(row, "15 layers, no cache") || !strings.Contains(row, "20→18") && w >= 60 {
				t.Errorf("width %d: %q does not name the shared layers", w, row)
			}
			if w == 140 && !strings.HasSuffix(strings.TrimSpace(row), "34→19") {
				t.Errorf("width 140 leaves pairs out: %q", row)
			}
			if w == 60 && !strings.HasSuffix(strings.TrimSpace(row), "…") {
				t.Errorf("width 60 does not say pairs are left out: %q", row)
			}
		}
	}
}

// TestMemoryDetailDropsFormulas: MemoryKV keeps only the KV formula,
// MemoryRows none, and both keep every allocation row.
func TestMemoryDetailDropsFormulas(t *testing.T) {
	st := asciiStyles()
	for _, mem := range []Memory{moeMemory(), gemma4Memory(), hybridMemory()} {
		full := strings.Join(MemoryLinesDetail(st, mem, 56, MemoryFull), "\n")
		kv := strings.Join(MemoryLinesDetail(st, mem, 56, MemoryKV), "\n")
		rows := strings.Join(MemoryLinesDetail(st, mem, 56, MemoryRows), "\n")
		for _, label := range []string{"weights ", "KV used ", "KV alloc ", "KV/token ", "scratch "} {
			if !strings.Contains(kv, label) || !strings.Contains(rows, label) {
				t.Errorf("a shorter memory panel lost its %q row:\n%s\n%s", label, kv, rows)
			}
		}
		if !strings.Contains(kv, "KV alloc =") || strings.Contains(rows, "KV alloc =") {
			t.Errorf("MemoryKV keeps the KV formula, MemoryRows none:\n%s\n---\n%s", kv, rows)
		}
		for _, f := range []string{"weights =", "active =", "PLE =", "state ="} {
			if strings.Contains(kv, f) || strings.Contains(rows, f) {
				t.Errorf("%q left in a shorter panel:\n%s", f, kv)
			}
		}
		if len(strings.Split(kv, "\n")) >= len(strings.Split(full, "\n")) {
			t.Errorf("MemoryKV is no shorter than the full panel:\n%s", kv)
		}
	}
}
