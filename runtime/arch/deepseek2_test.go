package arch

import (
	"math"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// TestDeepseek2Config: the synth deepseek2 file (../shared/docs/
// architectures-2026b.md: 4 heads, q_lora 96, kv_lora 64, nope 32 + rope
// 16, v 32, layer 0 dense, 8 experts in 4 groups, YaRN ×40 over 16 with
// mscale_all_dim 0.707) resolves as llama.cpp does: the rotation carries
// no magnitude, the score scale is (1 + 0.1·0.707·ln 40)²/√48 (the doc's
// 1.261²/√48), the routing rule is the file's.
func TestDeepseek2Config(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026b/synth-deepseek2-F32.gguf"))
	want := MLAConfig{QLora: 96, KVLora: 64, Nope: 32, Rope: 16, V: 32}
	got := m.MLA
	got.Scale = 0
	if got != want || m.HeadDim != 48 || m.KVHeads != 1 || m.Rope.Dims != 16 {
		t.Fatalf("MLA %+v, head dim %d, kv heads %d, rope dims %d; want %+v, 48, 1, 16", m.MLA, m.HeadDim, m.KVHeads, m.Rope.Dims, want)
	}
	if net := m.Rope.AttnFactor * m.Rope.YaRN.MScale; math.Abs(float64(net)-1) > 1e-6 {
		t.Errorf("cos/sin × %g × %g = %g, want 1: the correction belongs to the score scale", m.Rope.AttnFactor, m.Rope.YaRN.MScale, net)
	}
	ms := 1 + 0.1*0.707*math.Log(40)
	if want := ms * ms / math.Sqrt(48); math.Abs(float64(m.AttnScale)-want) > 1e-6 || m.AttnScale != m.MLA.Scale {
		t.Errorf("score scale %g (MLA %g), want %g", m.AttnScale, m.MLA.Scale, want)
	}
	if r := m.MoE.Rule(); r != (Rule{Gating: GatingSigmoid, Norm: true, Scale: 1.8, Groups: 4, GroupsUsed: 2}) || m.MoE.SharedFF != 64 {
		t.Errorf("rule %+v, shared ff %d", r, m.MoE.SharedFF)
	}
	if m.LeadDense != 1 || m.Layers[0].Experts != nil || !m.Layers[0].Config.DenseFFN || m.Layers[0].Gate.Rows != 256 {
		t.Errorf("layer 0 should be the dense lead: lead %d, experts %v", m.LeadDense, m.Layers[0].Experts != nil)
	}
	for il := 1; il < 4; il++ {
		x := m.Layers[il].Experts
		if x == nil || x.SelectBias == nil || x.Shared == nil || x.Shared.Scale.Data != nil || m.Layers[il].MLA == nil {
			t.Fatalf("layer %d: experts, selection bias, an ungated shared expert and MLA weights expected", il)
		}
	}
	if got, want := m.KVBytesPerToken(2), int64(4*(64+16)*2); got != want {
		t.Errorf("%d B a position, want 4 layers × 80 × 2 B = %d (keys only)", got, want)
	}
}

// TestDeepseek2Hostile: keys that contradict the latent attention's
// shape or the routing rule are refused naming the key, and an old
// conversion's fused attn_kv_b by name.
func TestDeepseek2Hostile(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-deepseek2-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	key := func(k string) string { return `key "deepseek2.` + k + `"` }
	cases := []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "gating func absent: softmax", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("deepseek2.expert_gating_func") }, ok: true},
		{name: "kv_lora_rank missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("deepseek2.attention.kv_lora_rank") }, field: key("attention.kv_lora_rank"), msg: "missing"},
		{name: "key_length not the cached row", edit: setKV("deepseek2.attention.key_length", uint32(81)), field: key("attention.key_length"), msg: "the cached row is kv_lora_rank 64 + rope 16"},
		{name: "value_length not the latent", edit: setKV("deepseek2.attention.value_length", uint32(32)), field: key("attention.value_length"), msg: "the latent of kv_lora_rank 64"},
		{name: "rope as wide as the head", edit: setKV("deepseek2.rope.dimension_count", uint32(48)), field: key("rope.dimension_count"), msg: "below key_length_mla 48"},
		{name: "two kv heads", edit: setKV("deepseek2.attention.head_count_kv", uint32(2)), field: key("attention.head_count_kv"), msg: "one cached row per token"},
		{name: "gating func 3", edit: setKV("deepseek2.expert_gating_func", uint32(3)), field: key("expert_gating_func"), msg: "1 softmax, 2 sigmoid"},
		{name: "groups not dividing", edit: setKV("deepseek2.expert_group_count", uint32(3)), field: key("expert_group_count"), msg: "must divide the 8 experts"},
		{name: "too few groups used", edit: setKV("deepseek2.expert_group_used_count", uint32(0)), field: key("expert_group_used_count"), msg: "cannot hold 2 chosen experts"},
		{name: "negative scale", edit: setKV("deepseek2.expert_weights_scale", float32(-1)), field: key("expert_weights_scale"), msg: "must be a positive number"},
		{name: "dense lead past the layers", edit: setKV("deepseek2.leading_dense_block_count", uint32(5)), field: key("leading_dense_block_count"), msg: "more than the 4 layers"},
		{name: "temperature tuning", edit: setKV("deepseek2.attention.temperature_scale", float32(0.1)), field: key("attention.temperature_scale"), msg: "not supported yet"},
		{name: "k_b per head missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.2.attn_k_b.weight") }, field: `tensor "blk.2.attn_k_b.weight"`, msg: "missing"},
		{name: "old fused kv_b", edit: func(t testing.TB, s *ggufspec.Spec) {
			kb := tensor(t, s, "blk.1.attn_k_b.weight")
			c := *kb
			c.Name = "blk.1.attn_kv_b.weight"
			s.Tensors = append(s.Tensors, c)
		}, field: `tensor "blk.1.attn_kv_b.weight"`, msg: "old conversion"},
	}
	runLoadCases(t, base, cases)
}
