package arch

import (
	"fmt"
	"strings"

	"vkchat/runtime/gguf"
)

// Qwen3.5 (qwen35, and qwen35moe with a mixture-of-experts FFN and a
// sigmoid-gated shared expert) is a hybrid: of every
// full_attention_interval layers (4) the last is gated full attention and
// the others are Gated DeltaNet layers, which fold each position into a
// fixed-size recurrent state instead of a KV cache (llama.cpp
// models/qwen35.cpp, qwen35moe.cpp; ../shared/docs/architectures-2026.md
// §1). Both kinds are pre-norm with the FFN's pre-norm named
// post_attention_norm.
//
// Full-attention layers: attn_q holds [q_h | gate_h] per head (twice the
// usual rows), per-head Q/K RMS norm, RoPE on the first
// rope.dimension_count dims (IMROPE, which for text positions is NeoX on
// those dims), and the attention output × σ(gate) before attn_output.
func init() {
	register(Arch{
		Name: "qwen35", NeoX: true, KeyLength: true, FFNNorm: "post_attention_norm",
		Block:    Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU, AttnGate: true},
		DeltaNet: true, MTP: true,
	})
	register(Arch{
		Name: "qwen35moe", NeoX: true, KeyLength: true, FFNNorm: "post_attention_norm",
		Block:    Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU, AttnGate: true},
		DeltaNet: true, Gating: GatingSoftmaxTopKNorm, SharedExpert: true, MTP: true,
	})
}

// DeltaNetConfig is the shape of a model's Gated DeltaNet layers; zero for
// models without them.
type DeltaNetConfig struct {
	ConvKernel int // ssm.conv_kernel: taps of the causal conv (d_conv)
	StateSize  int // ssm.state_size: S, the size of a key and of a value head
	KeyHeads   int // ssm.group_count: H_k
	ValueHeads int // ssm.time_step_rank: H_v; value head h reads key head h mod H_k
}

// Channels is the width of the fused projection and of the conv: q and k
// (H_k·S each) then v (H_v·S).
func (d *DeltaNetConfig) Channels() int { return (2*d.KeyHeads + d.ValueHeads) * d.StateSize }

// ConvFloats is one layer's conv state: the last ConvKernel−1 inputs of
// every channel.
func (d *DeltaNetConfig) ConvFloats() int { return (d.ConvKernel - 1) * d.Channels() }

// MatrixFloats is one layer's delta-rule state: an S×S matrix per value head.
func (d *DeltaNetConfig) MatrixFloats() int { return d.ValueHeads * d.StateSize * d.StateSize }

// StateFloats is one layer's whole recurrent state, always F32.
func (d *DeltaNetConfig) StateFloats() int { return d.ConvFloats() + d.MatrixFloats() }

// DeltaNet is one Gated DeltaNet layer's weights.
type DeltaNet struct {
	QKV    Weight // attn_qkv [embd x Channels]: q | k | v
	Z      Weight // attn_gate [embd x H_v·S]: the output gate's input
	Conv   Weight // ssm_conv1d, F32 [ConvKernel x Channels]: row c is channel c's taps, oldest first
	DtBias Weight // ssm_dt.bias [H_v]
	A      Weight // ssm_a [H_v]: −exp(A_log), so the decay g = softplus(α·x + dt_bias)·a is ≤ 0
	Beta   Weight // ssm_beta [embd x H_v]: β = σ(beta·x)
	Alpha  Weight // ssm_alpha [embd x H_v]
	Norm   Weight // ssm_norm [S]: the gated RMS norm's weight, shared by the heads
	Out    Weight // ssm_out [H_v·S x embd]
}

// SharedExpert is a dense FFN every token runs beside its routed experts:
// SiLU-gated, its output × σ(Scale·x) (qwen35moe), or added as it is
// where Scale is absent (granitehybrid; nemotron_h_moe's is ReLU² with
// no gate matrix).
type SharedExpert struct {
	Gate, Up Weight // [embd x shared_ff]; Gate zero for an ungated activation
	Down     Weight // [shared_ff x embd]
	Scale    Weight // ffn_gate_inp_shexp [embd]: one logit per token; zero (Data nil) for an ungated one (deepseek2)
}

// RecurrentLayers counts the layers that keep a state instead of a KV cache.
func (m *Model) RecurrentLayers() int {
	n := 0
	for i := range m.Layers {
		if m.Layers[i].Config.Kind.Recurrent() {
			n++
		}
	}
	return n
}

// StateBytes is the recurrent state of every recurrent layer.
func (m *Model) StateBytes() int64 {
	return int64(m.recurrentOf(KindDeltaNet))*int64(m.DeltaNet.StateFloats())*4 + m.shortConvStateBytes() + m.mamba2StateBytes()
}

func (m *Model) recurrentOf(k LayerKind) int {
	n := 0
	for i := range m.Layers {
		if m.Layers[i].Config.Kind == k {
			n++
		}
	}
	return n
}

// StateFormula says in one line how StateBytes adds up ("" without
// recurrent layers).
func (m *Model) StateFormula() string {
	var terms []string
	if n := m.recurrentOf(KindDeltaNet); n > 0 {
		d := &m.DeltaNet
		terms = append(terms, fmt.Sprintf("%d DeltaNet %s × (%d v-heads × %d² state + %d × %d conv) × 4 B",
			n, plural(n, "layer"), d.ValueHeads, d.StateSize, d.ConvKernel-1, d.Channels()))
	}
	if t := m.shortConvStateTerm(); t != "" {
		terms = append(terms, t)
	}
	if t := m.mamba2StateTerm(); t != "" {
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return ""
	}
	return fmt.Sprintf("%s = %d B", strings.Join(terms, " + "), m.StateBytes())
}

// maxDeltaNet bounds the DeltaNet keys: real models have S 128, 32 value
// heads and a kernel of 4; far past that a file is not a model we can run.
const maxDeltaNet = 1 << 12

// loadDeltaNet reads the DeltaNet keys of a hybrid declaration, drops the
// trailing multi-token-prediction blocks from the layer count (they are not
// part of the main pass), and checks that the multi-section RoPE rotates
// every pair by the text position.
func loadDeltaNet(l *loader, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	d := DeltaNetConfig{
		ConvKernel: l.uint("ssm.conv_kernel", 0, true),
		StateSize:  l.uint("ssm.state_size", 0, true),
		KeyHeads:   l.uint("ssm.group_count", 0, true),
		ValueHeads: l.uint("ssm.time_step_rank", 0, true),
	}
	inner := l.uint("ssm.inner_size", 0, true)
	nextn := l.uint("nextn_predict_layers", 0, false)
	interval := l.uint("full_attention_interval", 4, false)
	if l.err != nil {
		return l.err
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"ssm.conv_kernel", d.ConvKernel}, {"ssm.state_size", d.StateSize}, {"ssm.group_count", d.KeyHeads}, {"ssm.time_step_rank", d.ValueHeads}} {
		if k.v == 0 || k.v > maxDeltaNet {
			return bad(k.key, fmt.Sprintf("%d must be between 1 and %d", k.v, maxDeltaNet))
		}
	}
	switch {
	case d.ConvKernel < 2:
		return bad("ssm.conv_kernel", fmt.Sprintf("%d: a causal conv needs at least 2 taps", d.ConvKernel))
	case d.ValueHeads%d.KeyHeads != 0:
		return bad("ssm.time_step_rank", fmt.Sprintf("%d value heads are not a multiple of ssm.group_count %d key heads", d.ValueHeads, d.KeyHeads))
	case inner != d.ValueHeads*d.StateSize:
		return bad("ssm.inner_size", fmt.Sprintf("%d differs from time_step_rank %d × state_size %d", inner, d.ValueHeads, d.StateSize))
	case interval == 0:
		return bad("full_attention_interval", "must be positive")
	case nextn >= c.Layers:
		return bad("nextn_predict_layers", fmt.Sprintf("%d leaves no layers of block_count %d", nextn, c.Layers))
	}
	c.Layers -= nextn
	c.NextN = nextn
	c.DeltaNet = d
	c.FullAttnEvery = interval
	return checkTextRope(l, c)
}

// checkTextRope checks rope.dimension_sections: llama.cpp's IMROPE gives
// pair i the position of section t, h or w (all the text position) or e
// (0 for text) by i mod the sections' sum; vkchat rotates every pair by
// the text position, so a pair that would fall to e is refused.
func checkTextRope(l *loader, c *Config) error {
	key := "rope.dimension_sections"
	secs, ok, err := l.f.Int32s(l.key(key))
	if err != nil {
		return err
	}
	if !ok {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: "missing"}
	}
	if len(secs) < 3 {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: fmt.Sprintf("%d sections, expected 4", len(secs))}
	}
	sum := int32(0)
	for _, s := range secs[:min(4, len(secs))] {
		if s < 0 || s > 1<<16 {
			return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: fmt.Sprintf("section %d is out of range", s)}
		}
		sum += s
	}
	if sum == 0 {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: "the sections are all 0"}
	}
	for i := 0; i < c.Rope.Dims/2; i++ {
		s := int32(i) % sum
		text := (s%3 == 0 && s < 3*secs[0]) || (s%3 == 1 && s < 3*secs[1]) || (s%3 == 2 && s < 3*secs[2])
		if !text {
			return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)),
				Msg: fmt.Sprintf("%v leaves rotary pair %d to the extra section, which vkchat does not run", secs, i)}
		}
	}
	return nil
}

// deltaNetKind marks layer il as Gated DeltaNet unless it is the last of
// its full_attention_interval.
func deltaNetKind(c *Config, il int) LayerKind {
	if c.FullAttnEvery > 0 && (il+1)%c.FullAttnEvery != 0 {
		return KindDeltaNet
	}
	return KindAttention
}

// deltaNetLayer locates a DeltaNet layer's weights: its norms, mixer and
// FFN (dense or routed, as the attention layers have).
func (w *weights) deltaNetLayer(l *Layer, p string, a Arch, cfg *Config) {
	d, e := &cfg.DeltaNet, cfg.Embd
	hv, vw := d.ValueHeads, d.ValueHeads*d.StateSize
	l.AttnNorm = w.vector(p+"attn_norm.weight", e)
	x := &DeltaNet{
		QKV:    w.matrix(p+"attn_qkv.weight", e, d.Channels()),
		Z:      w.matrix(p+"attn_gate.weight", e, vw),
		Conv:   w.f32Matrix(p+"ssm_conv1d.weight", d.ConvKernel, d.Channels()),
		DtBias: w.vector(p+"ssm_dt.bias", hv),
		A:      w.vector(p+"ssm_a", hv),
		Beta:   w.matrix(p+"ssm_beta.weight", e, hv),
		Alpha:  w.matrix(p+"ssm_alpha.weight", e, hv),
		Norm:   w.vector(p+"ssm_norm.weight", d.StateSize),
		Out:    w.matrix(p+"ssm_out.weight", vw, e),
	}
	l.DeltaNet = x
	w.ffn(l, p, a, cfg)
}

// sharedExpert locates a layer's shared expert when the file has one
// (llama.cpp reads it as optional).
func (w *weights) sharedExpert(p string, a Arch, cfg *Config) *SharedExpert {
	if _, ok := w.f.Tensor(p + "ffn_up_shexp.weight"); !ok {
		return nil
	}
	e, ff := cfg.Embd, cfg.MoE.SharedFF
	if ff == 0 {
		ff = cfg.MoE.ExpertFF // llama.cpp's default for n_ff_shexp
	}
	s := &SharedExpert{
		Up:   w.matrix(p+"ffn_up_shexp.weight", e, ff),
		Down: w.matrix(p+"ffn_down_shexp.weight", ff, e),
	}
	if a.Block.Act.Gated() {
		s.Gate = w.matrix(p+"ffn_gate_shexp.weight", e, ff)
	}
	if !a.SharedUngated {
		s.Scale = w.vector(p+"ffn_gate_inp_shexp.weight", e)
	}
	return s
}
