package ui

import (
	"fmt"
	"testing"

	"vkchat/runtime/engine"
)

// newGemma4FakeEngine is the fake engine shaped as a Gemma 4 E2B: 35
// layers, 4 full (head dim 512) owning a cache of the context, 16 sliding
// (head dim 256) owning a ring of 512, 15 reading earlier layers' caches,
// and a per-layer embedding table of 35 × 256 Q8_0 values per token.
func newGemma4FakeEngine() *fakeEngine {
	f := newFakeEngine()
	f.info.Name, f.info.Arch, f.info.Layers, f.info.KVHeads, f.info.HeadDim = "gemma-4-e2b", "gemma4", 35, 1, 512
	f.info.KVLayout = []engine.KVGroup{
		{Layers: 4, Positions: 2048, KVHeads: 1, HeadDim: 512},
		{Layers: 16, Positions: 512, Window: 512, KVHeads: 1, HeadDim: 256},
	}
	f.info.KVShared = 15
	f.info.PLE = engine.PLEInfo{Width: 256, Layers: 35, Tokens: 262144, Type: "Q8_0", RowBytes: 35 * 256 / 32 * 34}
	perToken := int64(4*512+16*256) * 2 * 2
	f.stats = engine.Stats{ContextSize: 2048, KVPerToken: perToken, Weights: 3_105_000_000, Scratch: 12_582_912,
		KVAllocated: (4*2048*512 + 16*512*256) * 2 * 2, KVWindows: []engine.KVWindow{{Layers: 16, Window: 512}}}
	return f
}

// The screens under testdata/TestGoldenGemma4 are regenerated with
//
//	go test ./ui -run TestGoldenGemma4 -update
//
// The memory panel of a model whose layers differ in head size and share
// caches: the KV formula per group of layers, the shared layers holding
// none, and the per-layer embedding table worked out.
func TestGoldenGemma4(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		m := newTestModel(t, newGemma4FakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("Write a tiny Go program")
		screen(t, h, name+"_memory", sz.w, sz.h)
	}
}
