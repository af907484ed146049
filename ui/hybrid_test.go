package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"vkchat/runtime/engine"
)

// newHybridFakeEngine is the fake engine as a hybrid model shaped like
// synth-lfm2: 4 short-convolution layers keeping a fixed state, 2
// attention layers with a KV cache, 3 checkpoints of the state saved.
func newHybridFakeEngine() *fakeEngine {
	f := newFakeEngine()
	f.info.Name, f.info.Arch, f.info.Layers, f.info.KVHeads = "tiny-lfm2", "lfm2", 6, 2
	f.info.RecurrentLayers = 4
	f.info.LayerKinds = []string{"shortconv", "shortconv", "attention", "shortconv", "shortconv", "attention"}
	const state = 4 * 2 * 256 * 4
	perToken := int64(2 * 2 * 2 * 64 * 2)
	f.stats = engine.Stats{ContextSize: 2048, KVPerToken: perToken, KVAllocated: 2048 * perToken, Scratch: 1_122_304, Weights: 3_676_160,
		StateBytes: state, StateFormula: fmt.Sprintf("4 shortconv layers × (3−1) taps × 256 embd × 4 B = %d B", state),
		CheckpointBytes: 3 * state, Checkpoints: []int{8, 40, 42}}
	return f
}

// The screens under testdata/TestGoldenHybrid are regenerated with
//
//	go test ./ui -run TestGoldenHybrid -update
//
// A regenerate on a hybrid model whose state had to go back to a
// checkpoint: the reply says how many tokens were read again and how
// long that took, the speed panel too, and the memory panel shows the
// state beside the KV cache.
func TestGoldenHybrid(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newHybridFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("hi")
		eng.mu.Lock()
		eng.reread, eng.rereadTime = 3, 12*time.Millisecond
		eng.mu.Unlock()
		h.key("ctrl+r")
		h.idle()
		view := m.View()
		if want := "re-read 3 cached tokens"; !strings.Contains(view, want) {
			t.Errorf("%s: no %q on screen", name, want)
		}
		screen(t, h, name+"_regenerate", sz.w, sz.h)
	}
}
