package arch

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
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
}

// Hostile Gemma 4 metadata: each case edits one thing of the synthetic
// file and expects a one-line error naming the key or tensor, or (ok) a
// variant llama.cpp also accepts.
func TestGemma4Hostile(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026/synth-gemma4-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	const pat, shared, kvh = `key "gemma4.attention.sliding_window_pattern"`, `key "gemma4.attention.shared_kv_layers"`, `key "gemma4.attention.head_count_kv"`
	for _, c := range []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "ff per layer", edit: setKV("gemma4.feed_forward_length", []uint32{256, 256, 256, 256, 256, 256}), ok: true},
		{name: "no attn_v: V is K", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.0.attn_v.weight") }, ok: true},
		{name: "pattern too short", edit: setKV("gemma4.attention.sliding_window_pattern", []bool{true, false}), field: pat, msg: "must be 6 bools (one per layer), found 2"},
		{name: "pattern of numbers", edit: setKV("gemma4.attention.sliding_window_pattern", "x"), field: pat, msg: "must be a bool or an array of bools"},
		{name: "all layers shared", edit: setKV("gemma4.attention.shared_kv_layers", uint32(6)), field: shared, msg: "must be fewer than the 6 layers"},
		{name: "no full layer to share", edit: setKV("gemma4.attention.shared_kv_layers", uint32(5)), field: shared, msg: "layer 3 shares a cache, but no earlier layer of its kind owns one"},
		{name: "odd sliding head", edit: setKV("gemma4.attention.key_length_swa", uint32(63)), field: `key "gemma4.attention.key_length_swa"`, msg: "must be even"},
		{name: "sliding V length differs", edit: setKV("gemma4.attention.value_length_swa", uint32(32)), field: `key "gemma4.attention.value_length_swa"`, msg: "differs from the sliding key length 64"},
		{name: "sliding rope dims past the head", edit: setKV("gemma4.rope.dimension_count_swa", uint32(128)), field: `key "gemma4.rope.dimension_count_swa"`, msg: "at most the sliding head size 64"},
		{name: "kv heads array short", edit: setKV("gemma4.attention.head_count_kv", []uint32{2, 2, 2}), field: kvh, msg: "has 3 entries for 6 layers"},
		{name: "shared layer's kv heads differ", edit: setKV("gemma4.attention.head_count_kv", []uint32{2, 2, 2, 2, 2, 1}), field: kvh, msg: "layer 5 has 1 KV heads but reads the cache of layer 3, which has 2"},
		{name: "no window", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("gemma4.attention.sliding_window") }, field: `key "gemma4.attention.sliding_window"`, msg: "marks sliding layers"},
		{name: "PLE gate missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.2.inp_gate.weight") }, field: `tensor "blk.2.inp_gate.weight"`, msg: "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base.Clone()
			c.edit(t, s)
			m, err, _ := loadMeasured(t, encode(t, s))
			if c.ok {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if c.name == "no attn_v: V is K" && !bytes.Equal(m.Layers[0].Wv.Data, m.Layers[0].Wk.Data) {
					t.Error("V is not read from K's weights")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.msg) || !errors.Is(err, gguf.ErrFormat) {
				t.Fatalf("error %v\n  want a format error naming %s: %s", err, c.field, c.msg)
			}
		})
	}
}
