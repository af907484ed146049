package arch

import (
	"testing"

	"vkchat/internal/testenv"
)

// The synthetic Gemma 4 (pattern [1,1,1,0,1,0], window 8, head size 128
// full / 64 sliding, the last 2 layers sharing KV, PLE of 32) resolves to
// the per-layer geometry llama.cpp runs, and its KV cache counts each
// owned cache once at its own width.
func TestGemma4Layers(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026/synth-gemma4-F32.gguf"))
	want := []struct {
		window, headDim, ropeDims, kvLayer int
		base                               float32
		factors                            bool
	}{
		{8, 64, 64, 0, 10000, false},
		{8, 64, 64, 1, 10000, false},
		{8, 64, 64, 2, 10000, false},
		{0, 128, 128, 3, 1e6, true},
		{8, 64, 64, 2, 10000, false}, // shares layer 2's cache (sliding)
		{0, 128, 128, 3, 1e6, true},  // shares layer 3's cache (full)
	}
	if len(m.Layers) != len(want) {
		t.Fatalf("%d layers, want %d", len(m.Layers), len(want))
	}
	for i, w := range want {
		lc := m.Layers[i].Config
		if lc.Window != w.window || lc.HeadDim != w.headDim || lc.RopeDims != w.ropeDims || lc.KVLayer != w.kvLayer ||
			lc.RopeBase != w.base || lc.NoRopeFactors == w.factors || lc.KVHeads != 2 || lc.FF != 256 {
			t.Errorf("layer %d: %+v, want %+v", i, lc, w)
		}
		shared := i >= 4
		if (m.Layers[i].Wk.Data == nil) != shared || m.Layers[i].OutScale == nil || m.Layers[i].PLE == nil {
			t.Errorf("layer %d: K weight present %v (shared %v), out scale %v, PLE %v", i, m.Layers[i].Wk.Data != nil, shared, m.Layers[i].OutScale != nil, m.Layers[i].PLE != nil)
		}
	}
	if m.AttnScale != 1 || m.FinalSoftcap != 15 || !m.Block.VNorm || m.PLE == nil || m.PLE.Width != 32 || len(m.Rope.FreqFactors) != 64 {
		t.Errorf("scale %g softcap %g vnorm %v PLE %+v factors %d", m.AttnScale, m.FinalSoftcap, m.Block.VNorm, m.PLE, len(m.Rope.FreqFactors))
	}
	// owned caches: layer 3 (512 positions × 2 heads × 128) and layers
	// 0-2 (8 positions × 2 × 64), K and V, 2 bytes
	const ctx = 512
	if got, want := m.KVBytes(ctx, 2), int64((512*2*128+3*8*2*64)*2*2); got != want {
		t.Errorf("KV bytes %d, want %d", got, want)
	}
	if got, want := m.KVBytesPerToken(2), int64((2*128+3*2*64)*2*2); got != want {
		t.Errorf("KV bytes per token %d, want %d", got, want)
	}
	f := m.KVFormula(ctx, 2)
	const wantFormula = "(1 layer × 512 ctx × 2 kv heads × 128 head dim + 3 layers × 8 window × 2 kv heads × 64 head dim) × 2 (K,V) × 2 B = 536576 B (+ 2 KV-shared layers, no cache of their own)"
	if f != wantFormula {
		t.Errorf("formula\n %s\nwant\n %s", f, wantFormula)
	}
}
