package panels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

// hybridMemory is synth-lfm2's memory at a context of 512 with an F16
// cache: 4 short-convolution layers (a state of (3−1) × 256 floats each)
// and 2 attention layers of 2 KV heads × 64, three checkpoints saved.
func hybridMemory() Memory {
	info := engine.ModelInfo{Arch: "lfm2", Layers: 6, RecurrentLayers: 4, LayerKinds: []string{"shortconv", "shortconv", "attention", "shortconv", "shortconv", "attention"},
		KVHeads: 2, HeadDim: 64, KVType: "f16", ContextSize: 512}
	const state = 4 * 2 * 256 * 4
	return Memory{Info: info, Stats: engine.Stats{ContextUsed: 40, ContextSize: 512, KVPerToken: 2 * 2 * 2 * 64 * 2, KVUsed: 40 * 1024,
		KVAllocated: 2 * 512 * 2 * 64 * 2 * 2, Weights: 3_676_160, Scratch: 1_122_304,
		StateBytes: state, StateFormula: fmt.Sprintf("4 shortconv layers × (3−1) taps × 256 embd × 4 B = %d B", state),
		CheckpointBytes: 3 * state, Checkpoints: []int{16, 36, 39}}}
}

// TestMemoryHybrid: a hybrid model's panel shows its layer kinds, the
// recurrent state with its formula and the checkpoints, and its KV
// formula counts the attention layers only and still adds up to what the
// backend allocated; the bar names the state beside the KV cache.
func TestMemoryHybrid(t *testing.T) {
	st := asciiStyles()
	mem := hybridMemory()
	for _, w := range []int{16, 36, 56} {
		lines := MemoryLines(st, mem, w)
		text := strings.Join(lines, "\n")
		flat := strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"4 shortconv + 2 attention", "ssAssA", "state", "ckpts", "state =", ExactBytes(mem.Stats.StateBytes), ExactBytes(mem.Stats.CheckpointBytes)} {
			if !strings.Contains(text, want) {
				t.Errorf("width %d: no %q in\n%s", w, want, text)
			}
		}
		if w >= 36 {
			for _, want := range []string{"2 attention layers × 512 ctx", "= 524,288 B ✓", "4 shortconv layers × (3−1) taps × 256 embd × 4 B = 8,192 B"} {
				if !strings.Contains(flat, want) {
					t.Errorf("width %d: no %q in\n%s", w, want, text)
				}
			}
		}
		for i, l := range lines {
			if termtext.Width(l) > w && i > 11 { // the size rows are cut by the box
				t.Errorf("width %d: formula row %q is %d cells wide", w, l, termtext.Width(l))
			}
		}
	}
	if total, _, _ := KVFormula(mem.Info, 512); total != mem.Stats.KVAllocated {
		t.Errorf("KV formula %d B, allocated %d B", total, mem.Stats.KVAllocated)
	}
	bar := strings.Join(StatusLines(st, Status{Memory: mem}, 160, 3), "\n")
	if !strings.Contains(bar, "+ state "+Bytes(mem.Stats.StateBytes)) {
		t.Errorf("status bar lacks the state:\n%s", bar)
	}
	_, dense, _ := goldenData()
	if text := strings.Join(MemoryLines(st, dense, 56), "\n"); strings.Contains(text, "state") {
		t.Errorf("a dense model's panel shows a state:\n%s", text)
	}
}

// TestMemoryHybridGolden pins the hybrid model's memory panel; regenerate
// with go test ./ui/panels -run TestMemoryHybridGolden -update.
func TestMemoryHybridGolden(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{40, 60} {
		box := Box(st, "Memory", MemoryLines(st, hybridMemory(), InnerWidth(w)), w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}
