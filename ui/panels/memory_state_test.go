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

// kvQuantMemory is synth-qwen3-F32's panel with a cache of keys of type k
// and values of type v (2 layers, 2 KV heads × 128, 512 positions).
func kvQuantMemory(kv string, perPosition int64) Memory {
	info := engine.ModelInfo{Arch: "qwen3", Layers: 2, KVHeads: 2, HeadDim: 128, KVType: kv, ContextSize: 512}
	return Memory{Info: info, Stats: engine.Stats{ContextUsed: 12, ContextSize: 512, KVPerToken: perPosition, KVUsed: 12 * perPosition,
		KVAllocated: 512 * perPosition, Weights: 14_162_944, Scratch: 1_901_568}}
}

// TestMemoryKVQuant: with a quantized cache the formula is in the cache's
// type and adds up to what the backend allocated (q8_0: 34 B a block of 32,
// 1,088 B a position here, as llama.cpp's 0.53 MiB at 512; q4_0: 18 B,
// 576 B; keys q8_0 with values f16: 1,568 B), and a row says what f16
// would take; an f16 cache has no such row.
func TestMemoryKVQuant(t *testing.T) {
	st := asciiStyles()
	for _, c := range []struct {
		kv    string
		per   int64
		total string
	}{{"q8_0", 1088, "557,056 B ✓"}, {"q4_0", 576, "294,912 B ✓"}, {"q8_0/f16", 1568, "802,816 B ✓"}, {"f16", 2048, "1,048,576 B ✓"}} {
		text := strings.Join(strings.Fields(strings.Join(MemoryLines(st, kvQuantMemory(c.kv, c.per), 56), "\n")), " ")
		if !strings.Contains(text, c.total) {
			t.Errorf("%s: no %q in %s", c.kv, c.total, text)
		}
		if f16 := strings.Contains(text, "in f16 1.00 MiB 1,048,576 B"); f16 != (c.kv != "f16") {
			t.Errorf("%s: the f16 row shown %v in %s", c.kv, f16, text)
		}
	}
}

func TestMemoryKVQuantGolden(t *testing.T) {
	st := asciiStyles()
	for _, c := range []struct {
		kv  string
		per int64
	}{{"q8_0", 1088}, {"q4_0", 576}} {
		for _, w := range []int{40, 60} {
			box := Box(st, "Memory", MemoryLines(st, kvQuantMemory(c.kv, c.per), InnerWidth(w)), w)
			t.Run(fmt.Sprintf("%s_width%d", c.kv, w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
		}
	}
}

// mamba2Memory is synth-nemotron_h-F32's memory at a context of 512 with
// an F16 cache, as the CPU backend reports it after a 24-token chat: 4
// Mamba2 layers (a conv state of (4−1) × 384 floats and a scan state of 8
// heads × 32 × 32 each), 3 layers that are an FFN alone (no cache, no
// state) and 1 attention layer of 2 KV heads × 64, two checkpoints saved.
func mamba2Memory() Memory {
	info := engine.ModelInfo{Arch: "nemotron_h", Layers: 8, RecurrentLayers: 4, FFNLayers: 3,
		LayerKinds: []string{"mamba2", "ffn", "mamba2", "ffn", "mamba2", "attention", "ffn", "mamba2"},
		KVHeads:    2, HeadDim: 64, KVType: "f16", ContextSize: 512}
	const state = 4 * (3*384 + 8*32*32) * 4
	return Memory{Info: info, Stats: engine.Stats{ContextUsed: 24, ContextSize: 512, KVPerToken: 512, KVUsed: 24 * 512,
		KVAllocated: 262_144, Weights: 13_770_368, Scratch: 1_378_816,
		StateBytes: state, StateFormula: fmt.Sprintf("4 Mamba2 layers × ((4−1) taps × 384 conv channels + 8 heads × 32 head dim × 32 state) × 4 B = %d B", state),
		CheckpointBytes: 2 * state, Checkpoints: []int{4, 24}}}
}

// TestMemoryMamba2: a Mamba2 hybrid's panel counts only its one attention
// layer in the KV formula (not the FFN-only layers), which adds up to what
// the backend allocated, and shows the Mamba2 state with its formula.
func TestMemoryMamba2(t *testing.T) {
	st := asciiStyles()
	mem := mamba2Memory()
	text := strings.Join(MemoryLines(st, mem, 56), "\n")
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{"4 mamba2 + 3 ffn + 1 attention", "mfmfmAfm", "1 attention layer × 512 ctx", "= 262,144 B ✓",
		"4 Mamba2 layers × ((4−1) taps × 384 conv channels + 8 heads × 32 head dim × 32 state) × 4 B = 149,504 B"} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if total, _, _ := KVFormula(mem.Info, 512); total != mem.Stats.KVAllocated {
		t.Errorf("KV formula %d B, allocated %d B", total, mem.Stats.KVAllocated)
	}
}

// TestMemoryMamba2Golden pins the Mamba2 hybrid's memory panel; regenerate
// with go test ./ui/panels -run TestMemoryMamba2Golden -update.
func TestMemoryMamba2Golden(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{40, 60} {
		box := Box(st, "Memory", MemoryLines(st, mamba2Memory(), InnerWidth(w)), w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}
