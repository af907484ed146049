package arch

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// The synthetic Gemma 4 26B-A4B (4 experts of ff 64, top-2, a dense FFN
// of 96 beside them on every layer, full layers with 1 KV head × 64 and
// no attn_v) loads with experts beside each dense FFN: the fused gate|up
// bank split per expert, the router's and experts' scales, the three
// extra norms.
func TestGemma4MoELayers(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026b/synth-gemma4moe-F32.gguf"))
	if m.MoE.Experts != 4 || m.MoE.ExpertsUsed != 2 || m.MoE.ExpertFF != 64 || m.MoE.Gating != GatingSoftmaxTopKNorm || m.PLE != nil {
		t.Fatalf("MoE %+v, PLE %v", m.MoE, m.PLE)
	}
	for i := range m.Layers {
		L := &m.Layers[i]
		lc, x := L.Config, L.Experts
		full := i == 3 || i == 5
		wantKV := 2
		if full {
			wantKV = 1
		}
		if lc.KVHeads != wantKV || lc.FF != 96 || lc.KVLayer != i {
			t.Errorf("layer %d: %+v", i, lc)
		}
		if full != bytes.Equal(L.Wv.Data, L.Wk.Data) {
			t.Errorf("layer %d: V read from K's weights %v, full layer %v", i, bytes.Equal(L.Wv.Data, L.Wk.Data), full)
		}
		if x == nil || L.Gate.Data == nil || L.Down.Data == nil || L.PostDenseNorm == nil || L.PostFFNNorm == nil {
			t.Fatalf("layer %d: experts %v, dense gate %v, post-norms %v %v", i, x != nil, L.Gate.Data != nil, L.PostDenseNorm != nil, L.PostFFNNorm != nil)
		}
		if !x.FusedGateUp || x.Up.Data != nil || x.RouterScale == nil || x.DownScale == nil || x.PreNorm == nil || x.PostNorm == nil {
			t.Fatalf("layer %d: experts %+v", i, x)
		}
		// expert 1's gate is rows 128..191 of the fused bank, its up rows
		// 192..255 (gate then up, per expert)
		g, u, d := x.Expert(1)
		rb, _ := x.Gate.Type.RowBytes(uint64(x.Gate.Cols))
		if g.Rows != 64 || u.Rows != 64 || d.Rows != 256 ||
			!bytes.Equal(g.Data, x.Gate.Data[128*rb:192*rb]) || !bytes.Equal(u.Data, x.Gate.Data[192*rb:256*rb]) {
			t.Errorf("layer %d: expert 1 gate/up/down rows %d/%d/%d not the fused bank's runs", i, g.Rows, u.Rows, d.Rows)
		}
	}
	// a token reads 2 of the 4 experts' banks
	if m.ActiveWeightBytes() != m.WeightBytes()-m.ExpertBytes()/2 {
		t.Errorf("active %d of %d bytes, experts %d", m.ActiveWeightBytes(), m.WeightBytes(), m.ExpertBytes())
	}
}

// Hostile Gemma 4 MoE files: one edit each, a one-line error naming the
// key or tensor, or (ok) a variant llama.cpp also accepts.
func TestGemma4MoEHostile(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-gemma4moe-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	// split: the fused bank of every layer written as llama.cpp's split
	// form (ffn_gate_exps, ffn_up_exps) of the same rows
	split := func(_ testing.TB, s *ggufspec.Spec) {
		for i := 0; i < 6; i++ {
			p := "blk." + string(rune('0'+i)) + "."
			fused := *s.Tensor(p + "ffn_gate_up_exps.weight")
			s.DelTensor(p + "ffn_gate_up_exps.weight")
			cols, ff2, n := fused.Dims[0], fused.Dims[1], fused.Dims[2]
			row := int(cols) * 4
			var gate, up []byte
			for e := 0; e < int(n); e++ {
				base := e * int(ff2) * row
				half := int(ff2) / 2 * row
				gate = append(gate, fused.Data[base:base+half]...)
				up = append(up, fused.Data[base+half:base+2*half]...)
			}
			dims := []uint64{cols, ff2 / 2, n}
			s.Tensors = append(s.Tensors,
				ggufspec.Tensor{Name: p + "ffn_gate_exps.weight", Type: ggml.F32, Dims: dims, Data: gate},
				ggufspec.Tensor{Name: p + "ffn_up_exps.weight", Type: ggml.F32, Dims: dims, Data: up})
		}
	}
	for _, c := range []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "split gate and up banks", edit: split, ok: true},
		{name: "no per-expert scale", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.2.ffn_down_exps.scale") }, ok: true},
		{name: "dense: no expert keys, no routers", edit: func(_ testing.TB, s *ggufspec.Spec) {
			for _, k := range []string{"expert_count", "expert_used_count", "expert_feed_forward_length"} {
				s.Del("gemma4." + k)
			}
			for i := 0; i < 6; i++ {
				s.DelTensor("blk." + string(rune('0'+i)) + ".ffn_gate_inp.weight")
			}
		}, ok: true},
		{name: "router without expert_count", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("gemma4.expert_count") },
			field: `tensor "blk.0.ffn_gate_inp.weight"`, msg: "no gemma4.expert_count"},
		{name: "no expert ff", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("gemma4.expert_feed_forward_length") },
			field: `key "gemma4.expert_feed_forward_length"`, msg: "missing"},
		{name: "no router scale", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.1.ffn_gate_inp.scale") },
			field: `tensor "blk.1.ffn_gate_inp.scale"`, msg: "missing"},
		{name: "no expert post-norm", edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor("blk.4.post_ffw_norm_2.weight") },
			field: `tensor "blk.4.post_ffw_norm_2.weight"`, msg: "missing"},
		{name: "per-expert scale of 3", edit: func(t testing.TB, s *ggufspec.Spec) {
			if err := s.Tensor("blk.0.ffn_down_exps.scale").Retype(ggml.F32, 3); err != nil {
				t.Fatal(err)
			}
		}, field: `tensor "blk.0.ffn_down_exps.scale"`, msg: "shape [3], expected [4]"},
		{name: "fused bank of the wrong height", edit: func(t testing.TB, s *ggufspec.Spec) {
			if err := s.Tensor("blk.0.ffn_gate_up_exps.weight").Retype(ggml.F32, 256, 64, 4); err != nil {
				t.Fatal(err)
			}
		}, field: `tensor "blk.0.ffn_gate_up_exps.weight"`, msg: "expected [256 128 4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base.Clone()
			c.edit(t, s)
			m, err, _ := loadMeasured(t, encode(t, s))
			if c.ok {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				switch c.name {
				case "split gate and up banks":
					g, u, _ := m.Layers[0].Experts.Expert(1)
					fg, fu, _ := loadFile(t, f.Path).Layers[0].Experts.Expert(1)
					if m.Layers[0].Experts.FusedGateUp || !bytes.Equal(g.Data, fg.Data) || !bytes.Equal(u.Data, fu.Data) {
						t.Error("the split banks' expert 1 differs from the fused bank's")
					}
				case "no per-expert scale":
					if m.Layers[2].Experts.DownScale != nil || m.Layers[1].Experts.DownScale == nil {
						t.Error("a missing ffn_down_exps.scale should leave only that layer's experts unscaled")
					}
				case "dense: no expert keys, no routers":
					if m.MoE.Experts != 0 || m.Layers[0].Experts != nil || m.Layers[0].PostDenseNorm != nil {
						t.Errorf("a file without experts should load dense: MoE %+v", m.MoE)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.msg) || !errors.Is(err, gguf.ErrFormat) {
				t.Fatalf("error %v\n  want a format error naming %s: %s", err, c.field, c.msg)
			}
		})
	}
}
