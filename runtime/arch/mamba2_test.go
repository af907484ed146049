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

// TestMamba2Layers: the synth nemotron_h file's head_count_kv and
// feed_forward_length arrays make layers 0, 2, 4 and 7 Mamba2 layers, 1, 3
// and 6 FFN layers and 5 the attention layer; the KV figures count that
// one, the state the four Mamba2 layers (the doc's 9,344 floats each).
func TestMamba2Layers(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026b/synth-nemotron_h-F32.gguf"))
	var kinds []string
	for i := range m.Layers {
		l := &m.Layers[i]
		kinds = append(kinds, l.Config.Kind.String())
		if (l.Mamba2 != nil) != (l.Config.Kind == KindMamba2) {
			t.Errorf("layer %d: kind %s with Mamba2 weights %v", i, l.Config.Kind, l.Mamba2 != nil)
		}
		if l.Config.Kind == KindFFN && (l.Up.Data == nil || l.Gate.Data != nil || l.Wq.Data != nil) {
			t.Errorf("layer %d: an FFN layer with up %v, gate %v, Q %v", i, l.Up.Data != nil, l.Gate.Data != nil, l.Wq.Data != nil)
		}
	}
	if got := strings.Join(kinds, " "); got != "mamba2 ffn mamba2 ffn mamba2 attention ffn mamba2" {
		t.Errorf("layer kinds %s", got)
	}
	if c := m.Mamba2; c != (Mamba2Config{ConvKernel: 4, Inner: 256, State: 32, Groups: 2, Heads: 8}) {
		t.Errorf("Mamba2 config %+v", c)
	}
	if m.RecurrentLayers() != 4 || m.Layers[5].Config.Rope {
		t.Errorf("recurrent %d, attention RoPE %v; want 4 and none", m.RecurrentLayers(), m.Layers[5].Config.Rope)
	}
	if got, want := m.KVBytes(512, 2), int64(512*2*64*2*2); got != want {
		t.Errorf("KV bytes %d, want %d (1 attention layer)", got, want)
	}
	if got, want := m.StateBytes(), int64(4*9344*4); got != want {
		t.Errorf("state %d B, want %d", got, want)
	}
	moe := loadFile(t, testenv.Model(t, "2026b/synth-nemotron_h_moe-F32.gguf"))
	if e := moe.MoE; e.Gating != GatingSigmoid || !e.Norm || e.Scale != 2.5 || e.SharedFF != 128 || e.Groups != 0 {
		t.Errorf("nemotron_h_moe experts %+v", e)
	}
	if x := moe.Layers[1].Experts; x == nil || x.SelectBias == nil || x.Gate.Data != nil || x.Shared == nil || x.Shared.Gate.Data != nil || x.Shared.Scale.Data != nil {
		t.Errorf("nemotron_h_moe layer 1: experts %+v", x)
	}
	g := loadFile(t, testenv.Model(t, "2026b/synth-granitehybrid-F32.gguf"))
	if g.MoE.ExpertFF != 8 || g.Layers[0].Experts == nil || g.Layers[0].Mamba2 == nil || g.Mamba2.HeadDim() != 64 {
		t.Errorf("granitehybrid: expert ff %d, layer 0 experts %v, Mamba2 %v, head dim %d", g.MoE.ExpertFF, g.Layers[0].Experts != nil, g.Layers[0].Mamba2 != nil, g.Mamba2.HeadDim())
	}
}

// TestRouteSigmoid: nemotron_h_moe's rule as the file sets it (sigmoid by
// default, no expert_gating_func key): the bias only chooses (expert 2
// wins by its bias, but is weighted by its own σ), weights are
// renormalised, then scaled.
func TestRouteSigmoid(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026b/synth-nemotron_h_moe-F32.gguf"))
	logits := []float32{2, 1, 0, -1}
	bias := []float32{0, 0, 2, 0}
	order, sel, wts, scores := make([]int32, 4), make([]int32, 2), make([]float32, 2), make([]float32, 4)
	m.MoE.Rule().Route(logits, bias, scores, order, sel, wts)
	if sel[0] != 2 || sel[1] != 0 {
		t.Fatalf("chose %v, want [2 0]", sel)
	}
	s0, s2 := logits[0], logits[2] // σ(2), σ(0) = 0.5
	if s2 != 0.5 || wts[0] != s2/(s2+s0)*2.5 || wts[1] != s0/(s2+s0)*2.5 {
		t.Errorf("weights %v, want σ/Σσ × 2.5 of [%g %g]", wts, s2, s0)
	}
}

// TestMamba2Hostile: what a Mamba2 hybrid can get wrong about its ssm keys
// and tensors is refused with an error naming the key or tensor.
func TestMamba2Hostile(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-nemotron_h-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	key := func(k string) string { return `key "nemotron_h.` + k + `"` }
	cases := []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "heads not dividing inner", edit: setKV("nemotron_h.ssm.time_step_rank", uint32(7)), field: key("ssm.time_step_rank"), msg: "do not divide ssm.inner_size 256"},
		{name: "groups not dividing heads", edit: setKV("nemotron_h.ssm.group_count", uint32(3)), field: key("ssm.group_count"), msg: "do not divide the 8 heads"},
		{name: "state 0", edit: setKV("nemotron_h.ssm.state_size", uint32(0)), field: key("ssm.state_size"), msg: "must be between 1 and"},
		{name: "inner missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("nemotron_h.ssm.inner_size") }, field: key("ssm.inner_size"), msg: "missing"},
		{name: "conv kernel 1", edit: setKV("nemotron_h.ssm.conv_kernel", uint32(1)), field: key("ssm.conv_kernel"), msg: "must be between 2 and 64"},
		{name: "huge state", edit: func(t testing.TB, s *ggufspec.Spec) {
			setKV("nemotron_h.ssm.state_size", uint32(1<<16))(t, s)
			setKV("nemotron_h.ssm.inner_size", uint32(1<<16))(t, s)
		}, field: key("ssm.state_size"), msg: "implausibly large"},
		{name: "head_count_kv one entry short", edit: setKV("nemotron_h.attention.head_count_kv", []int32{0, 0, 0, 0, 0, 2, 0}), field: key("attention.head_count_kv"), msg: "has 7 entries for 8 layers"},
		{name: "no attention layers", edit: setKV("nemotron_h.attention.head_count_kv", []int32{0, 0, 0, 0, 0, 0, 0, 0}), field: key("attention.head_count_kv"), msg: "0 for every layer: a model without attention layers is not supported"},
		{name: "no attention layers (one number)", edit: setKV("nemotron_h.attention.head_count_kv", uint32(0)), field: key("attention.head_count_kv"), msg: "a model without attention layers is not supported"},
		{name: "kv not dividing heads", edit: setKV("nemotron_h.attention.head_count_kv", []int32{0, 0, 0, 0, 0, 3, 0, 0}), field: key("attention.head_count_kv"), msg: "3 does not divide head_count 4"},
		{name: "conv as F16", edit: func(t testing.TB, s *ggufspec.Spec) {
			retype(t, s, "blk.0.ssm_conv1d.weight", ggml.F16, 4, 384)
		}, field: `tensor "blk.0.ssm_conv1d.weight"`, msg: "must be F32, found F16"},
		{name: "latent MoE", edit: setKV("nemotron_h.moe_latent_size", uint32(128)), field: key("moe_latent_size"), msg: "latent mixture-of-experts layers are not supported yet"},
		{name: "ssm_a missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.2.ssm_a") }, field: `tensor "blk.2.ssm_a"`, msg: "missing"},
		{name: "FFN layer marked as Mamba2", edit: setKV("nemotron_h.feed_forward_length", []int32{0, 0, 0, 256, 0, 0, 256, 0}),
			field: `tensor "blk.1.ssm_in.weight"`, msg: "missing"},
	}
	runLoadCases(t, base, cases)
}
