package arch

import (
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// TestLFM2Layers: the synth lfm2 file's head_count_kv [0 0 2 0 0 2] makes
// layers 0, 1, 3 and 4 short convolutions, and the KV figures count the
// two attention layers only.
func TestLFM2Layers(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026/synth-lfm2-F32.gguf"))
	var kinds []string
	for i := range m.Layers {
		kinds = append(kinds, m.Layers[i].Config.Kind.String())
		if (m.Layers[i].ShortConv != nil) != m.Layers[i].Config.Kind.Recurrent() {
			t.Errorf("layer %d: kind %s with short-conv weights %v", i, m.Layers[i].Config.Kind, m.Layers[i].ShortConv != nil)
		}
	}
	if got := strings.Join(kinds, " "); got != "shortconv shortconv attention shortconv shortconv attention" {
		t.Errorf("layer kinds %s", got)
	}
	if m.RecurrentLayers() != 4 || m.KVHeads != 2 || m.ShortConvL != 3 {
		t.Errorf("recurrent %d, kv heads %d, L %d; want 4, 2, 3", m.RecurrentLayers(), m.KVHeads, m.ShortConvL)
	}
	if got, want := m.KVBytes(512, 2), int64(2*512*2*64*2*2); got != want {
		t.Errorf("KV bytes %d, want %d (2 attention layers)", got, want)
	}
	if got, want := m.KVBytesPerToken(2), int64(2*2*2*64*2); got != want {
		t.Errorf("KV bytes per token %d, want %d", got, want)
	}
	if got, want := m.StateBytes(), int64(4*2*256*4); got != want {
		t.Errorf("state %d B, want %d", got, want)
	}
	if f := m.StateFormula(); f != "4 shortconv layers × (3−1) taps × 256 embd × 4 B = 8192 B" {
		t.Errorf("state formula %q", f)
	}
	if m.OutputNorm.Name != "token_embd_norm.weight" {
		t.Errorf("output norm %q", m.OutputNorm.Name)
	}
}

// TestLFM2Hostile: what an lfm2 file can get wrong about its layer kinds
// and short convolutions is refused with an error naming the key or tensor.
func TestLFM2Hostile(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026/synth-lfm2-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	const kv = `key "lfm2.attention.head_count_kv"`
	cases := []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "head_count_kv one entry short", edit: setKV("lfm2.attention.head_count_kv", []int32{0, 0, 2, 0, 0}), field: kv, msg: "has 5 entries for 6 layers"},
		{name: "head_count_kv negative", edit: setKV("lfm2.attention.head_count_kv", []int32{0, 0, 2, 0, -1, 2}), field: kv, msg: "entry 4 is -1"},
		{name: "head_count_kv disagreeing", edit: setKV("lfm2.attention.head_count_kv", []int32{0, 0, 2, 0, 0, 4}), field: kv, msg: "entry 5 is 4 where an earlier attention layer has 2"},
		{name: "head_count_kv all zero", edit: setKV("lfm2.attention.head_count_kv", []int32{0, 0, 0, 0, 0, 0}), field: kv, msg: "every entry is 0"},
		{name: "head_count_kv as strings", edit: setKV("lfm2.attention.head_count_kv", []string{"0"}), field: kv, msg: "must be an array of int32"},
		{name: "head_count_kv missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("lfm2.attention.head_count_kv") }, field: kv, msg: "missing"},
		{name: "sliding window", edit: setKV("lfm2.attention.sliding_window", uint32(4096)), field: `key "lfm2.attention.sliding_window"`, msg: "is not supported yet"},
		{name: "l_cache missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("lfm2.shortconv.l_cache") }, field: `key "lfm2.shortconv.l_cache"`, msg: "missing"},
		{name: "l_cache 1", edit: setKV("lfm2.shortconv.l_cache", uint32(1)), field: `key "lfm2.shortconv.l_cache"`, msg: "must be between 2 and 64"},
		{name: "l_cache 4 against a kernel of 3", edit: setKV("lfm2.shortconv.l_cache", uint32(4)), field: `tensor "blk.0.shortconv.conv.weight"`, msg: "shape"},
		{name: "conv kernel as F16", edit: func(t testing.TB, s *ggufspec.Spec) {
			retype(t, s, "blk.0.shortconv.conv.weight", ggml.F16, 3, 256)
		}, field: `tensor "blk.0.shortconv.conv.weight"`, msg: "must be F32, found F16"},
		{name: "in_proj missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.3.shortconv.in_proj.weight") },
			field: `tensor "blk.3.shortconv.in_proj.weight"`, msg: "missing"},
		{name: "output norm missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("token_embd_norm.weight") },
			field: `tensor "token_embd_norm.weight"`, msg: "missing"},
		{name: "attention layer marked as conv", edit: setKV("lfm2.attention.head_count_kv", []int32{0, 0, 0, 0, 0, 2}),
			field: `tensor "blk.2.shortconv.in_proj.weight"`, msg: "missing"},
	}
	runLoadCases(t, base, cases)
}
