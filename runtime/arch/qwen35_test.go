package arch

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// The shared qwen35 files: 4 layers, three Gated DeltaNet then one gated
// full attention, state 32, 2 key / 4 value heads, conv kernel 4; the MoE
// file adds 8 experts (top 2) and a shared expert of 64.
func TestQwen35Load(t *testing.T) {
	for _, name := range []string{"qwen35", "qwen35moe"} {
		t.Run(name, func(t *testing.T) {
			m := loadFile(t, testenv.Shared(t, "models/2026/synth-"+name+"-F32.gguf"))
			if m.DeltaNet != (DeltaNetConfig{ConvKernel: 4, StateSize: 32, KeyHeads: 2, ValueHeads: 4}) || m.FullAttnEvery != 4 {
				t.Fatalf("DeltaNet %+v every %d", m.DeltaNet, m.FullAttnEvery)
			}
			for i, l := range m.Layers {
				wantKind := KindDeltaNet
				if i == 3 {
					wantKind = KindAttention
				}
				if l.Config.Kind != wantKind || (l.DeltaNet != nil) != (wantKind == KindDeltaNet) {
					t.Errorf("layer %d: kind %v, DeltaNet weights %v", i, l.Config.Kind, l.DeltaNet != nil)
				}
				if (l.Experts != nil && l.Experts.Shared != nil) != (name == "qwen35moe") {
					t.Errorf("layer %d: shared expert present: %v", i, l.Experts != nil && l.Experts.Shared != nil)
				}
			}
			if !m.Block.AttnGate || m.Layers[3].Wq.Rows != 2*m.Heads*m.HeadDim {
				t.Errorf("gated attention: AttnGate %v, Wq rows %d", m.Block.AttnGate, m.Layers[3].Wq.Rows)
			}
			if m.Rope.Dims != 16 || !m.Rope.NeoX {
				t.Errorf("rope: %d dims, neox %v; want 16, NeoX", m.Rope.Dims, m.Rope.NeoX)
			}
			// KV for the one attention layer only; state for the three others
			if got, want := m.KVBytes(64, 2), int64(1*64*2*2*64*2); got != want {
				t.Errorf("KV bytes %d, want %d", got, want)
			}
			if got := m.KVBytesPerToken(2); got != 1*2*2*64*2 {
				t.Errorf("KV per token %d", got)
			}
			if got, want := m.StateBytes(), int64(3*(4*32*32+3*256)*4); got != want {
				t.Errorf("state bytes %d, want %d", got, want)
			}
			if f := m.StateFormula(); !strings.Contains(f, "3 DeltaNet layers") || !strings.HasSuffix(f, "= 58368 B") {
				t.Errorf("state formula %q", f)
			}
		})
	}
}

func qwen35Spec(t *testing.T) *ggufspec.Spec {
	f, err := gguf.Open(testenv.Model(t, "2026/synth-qwen35-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return fromgguf.Spec(f).Clone()
}

// Trailing multi-token-prediction blocks are not part of the main pass:
// block_count counts them, the trunk leaves them out.
func TestQwen35SkipsMTPBlocks(t *testing.T) {
	s := qwen35Spec(t)
	s.Set("qwen35.block_count", uint32(5))
	s.Set("qwen35.nextn_predict_layers", uint32(1))
	m, err, _ := loadMeasured(t, encode(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if m.Layers == nil || len(m.Layers) != 4 {
		t.Fatalf("%d layers, want the 4 of the trunk", len(m.Layers))
	}
}

// Bad DeltaNet keys and tensors are refused by name.
func TestQwen35Hostile(t *testing.T) {
	for _, c := range []struct {
		name, field, msg string
		edit             func(s *ggufspec.Spec)
	}{
		{"value heads not a multiple of key heads", `key "qwen35.ssm.time_step_rank"`, "not a multiple", func(s *ggufspec.Spec) {
			s.Set("qwen35.ssm.time_step_rank", uint32(3))
		}},
		{"inner size off", `key "qwen35.ssm.inner_size"`, "differs from time_step_rank 4 × state_size 32", func(s *ggufspec.Spec) {
			s.Set("qwen35.ssm.inner_size", uint32(100))
		}},
		{"state size missing", `key "qwen35.ssm.state_size"`, "missing", func(s *ggufspec.Spec) { s.Del("qwen35.ssm.state_size") }},
		{"conv kernel 1", `key "qwen35.ssm.conv_kernel"`, "at least 2 taps", func(s *ggufspec.Spec) { s.Set("qwen35.ssm.conv_kernel", uint32(1)) }},
		{"conv kernel 2^20", `key "qwen35.ssm.conv_kernel"`, "between 1 and", func(s *ggufspec.Spec) { s.Set("qwen35.ssm.conv_kernel", uint32(1<<20)) }},
		{"interval 0", `key "qwen35.full_attention_interval"`, "must be positive", func(s *ggufspec.Spec) {
			s.Set("qwen35.full_attention_interval", uint32(0))
		}},
		{"all layers MTP", `key "qwen35.nextn_predict_layers"`, "leaves no layers", func(s *ggufspec.Spec) {
			s.Set("qwen35.nextn_predict_layers", uint32(4))
		}},
		{"rope sections missing", `key "qwen35.rope.dimension_sections"`, "missing", func(s *ggufspec.Spec) { s.Del("qwen35.rope.dimension_sections") }},
		{"rope pair in the extra section", `key "qwen35.rope.dimension_sections"`, "rotary pair 3", func(s *ggufspec.Spec) {
			s.Set("qwen35.rope.dimension_sections", []int32{1, 1, 1, 5})
		}},
		{"conv weights of the wrong shape", `tensor "blk.1.ssm_conv1d.weight"`, "shape", func(s *ggufspec.Spec) {
			s.Tensor("blk.1.ssm_conv1d.weight").Dims = []uint64{2, 512}
		}},
		{"no ssm_a", `tensor "blk.2.ssm_a"`, "missing", func(s *ggufspec.Spec) { s.DelTensor("blk.2.ssm_a") }},
		{"attention Q without its gate half", `tensor "blk.3.attn_q.weight"`, "shape", func(s *ggufspec.Spec) {
			q := s.Tensor("blk.3.attn_q.weight")
			q.Dims = []uint64{256, 256}
			q.Data = q.Data[:4*256*256]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := qwen35Spec(t)
			c.edit(s)
			_, err, _ := loadMeasured(t, encode(t, s))
			if err == nil {
				t.Fatalf("loaded; want an error naming %s", c.field)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) || !errors.Is(err, gguf.ErrFormat) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error %q\n  want one line wrapping ErrFormat with field %q and message %q", msg, c.field, c.msg)
			}
		})
	}
}

// An MTP block is loaded as the model's MTP head, beside a trunk of the
// layers before it; a block with eh_proj but without the rest is refused
// by the tensor's name.
func TestQwen35LoadsTheMTPHead(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-qwen35mtp-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 4 || m.MTP == nil || m.MTP.Block != 4 || m.MTP.HeadNorm.Name != "blk.4.nextn.shared_head_norm.weight" ||
		m.MTP.EHProj.Cols != 512 || m.MTP.Output.Name != "output.weight" || m.MTP.Layer.Config.KVLayer != 0 {
		t.Fatalf("%d layers, MTP %+v", len(m.Layers), m.MTP)
	}
	s := fromgguf.Spec(f).Clone()
	s.DelTensor("blk.4.nextn.hnorm.weight")
	_, err, _ = loadMeasured(t, encode(t, s))
	if err == nil || !strings.Contains(err.Error(), `tensor "blk.4.nextn.hnorm.weight"`) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("without hnorm: %v, want an error naming the tensor", err)
	}
}
