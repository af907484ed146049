package arch

import (
	"fmt"

	"vkchat/runtime/gguf"
)

// Mamba2 hybrids (llama.cpp models/nemotron-h.cpp, granite-hybrid.cpp and
// mamba-base.cpp's build_mamba2_layer; ../shared/docs/architectures-2026b.md,
// "Mamba2 hybrids"): a layer whose attention.head_count_kv entry is 0 is
// a Mamba2 layer, the others attend (without RoPE in these files).
//
// nemotron_h and nemotron_h_moe (Nemotron-H, Nemotron 3 Nano) run one
// sub-block per layer, x += branch(rms(x)·attn_norm): a Mamba2 mixer, an
// attention, or, where feed_forward_length is not 0, an FFN alone: ReLU²
// without a gate, dense or routed by sigmoid with a selection-only bias
// beside an ungated ReLU² shared expert. granitehybrid (Granite 4.0-H)
// follows every mixer with the pre-norm FFN (dense SwiGLU, or softmax
// top-k experts with a SwiGLU shared expert) and has granite's four
// multipliers.
//
// A Mamba2 layer on u = rms(x)·attn_norm:
//
//	z, xBC, dt = split(ssm_in·u)                  (inner, inner + 2·G·N, H)
//	xBC = silu(conv(xBC) + conv_bias)             (causal, depthwise, ssm.conv_kernel taps)
//	x, B, C = split(xBC)                          (inner, G·N, G·N)
//	per head h of P = inner/H values, group g = h / (H/G):
//	    δ = softplus(dt_h + dt_bias_h);  S_h = e^(δ·A_h)·S_h + δ·x_h ⊗ B_g;  y_h = S_h·C_g + D_h·x_h
//	y = y ⊙ silu(z), RMS-normed in G groups of inner/G × ssm_norm
//	x += ssm_out·y
//
// so each layer keeps the last K−1 xBC inputs and the H·P·N matrix S.
func init() {
	nemotron := Arch{
		Name: "nemotron_h", KeyLength: true, Mamba2: true, SingleBranch: true, NoRope: true,
		QKVBias: Optional, OutBias: Optional, AttnScaleKey: "attention.scale",
		Block: Block{PreNorm: true, Act: ActReLU2},
	}
	register(nemotron)
	// sigmoid routing with its rule from the expert_* keys as deepseek2's
	// (a bias that only chooses, renormalised, scaled; no group limit in
	// Nemotron 3 Nano), beside an ungated ReLU² shared expert
	nemotron.Name, nemotron.Gating, nemotron.RoutingKeys = "nemotron_h_moe", GatingSigmoid, true
	nemotron.SharedExpert, nemotron.SharedUngated = true, true
	register(nemotron)
	register(Arch{
		Name: "granitehybrid", KeyLength: true, Mamba2: true, RopeFinetunedKey: "rope.scaling.finetuned",
		Block:         Block{PreNorm: true, Act: ActSiLU},
		EmbedScaleKey: "embedding_scale", ResidualScaleKey: "residual_scale",
		AttnScaleKey: "attention.scale", LogitScaleKey: "logit_scale", LogitScaleNeeded: true,
		Gating: GatingSoftmaxTopKNorm, MoEOptional: true, ExpertFFIsFF: true,
		SharedExpert: true, SharedUngated: true,
	})
}

// Mamba2Config is the shape of a model's Mamba2 layers; zero without them.
type Mamba2Config struct {
	ConvKernel int // ssm.conv_kernel: K, the taps of the causal conv
	Inner      int // ssm.inner_size: the width of x, z and y
	State      int // ssm.state_size: N
	Groups     int // ssm.group_count: G, the B/C groups
	Heads      int // ssm.time_step_rank: H, the SSM heads (one dt, A and D each)
}

// HeadDim is P, the values of x one head scans.
func (c *Mamba2Config) HeadDim() int { return c.Inner / c.Heads }

// ConvChannels is the width of xBC: x, then B and C for every group.
func (c *Mamba2Config) ConvChannels() int { return c.Inner + 2*c.Groups*c.State }

// InProj is ssm_in's rows: z, xBC, dt.
func (c *Mamba2Config) InProj() int { return c.Inner + c.ConvChannels() + c.Heads }

// ConvFloats is one layer's conv state: the last K−1 xBC inputs.
func (c *Mamba2Config) ConvFloats() int { return (c.ConvKernel - 1) * c.ConvChannels() }

// SSMFloats is one layer's scan state: an P×N matrix per head.
func (c *Mamba2Config) SSMFloats() int { return c.Inner * c.State }

// Mamba2 is one Mamba2 layer's mixer weights.
type Mamba2 struct {
	In       Weight  // ssm_in [embd x InProj]: z | xBC | dt
	Conv     Weight  // ssm_conv1d, F32 [K x ConvChannels]: row c is channel c's taps, oldest first
	ConvBias *Weight // ssm_conv1d.bias [ConvChannels], optional
	DtBias   Weight  // ssm_dt.bias [H]
	A        Weight  // ssm_a, F32 [1 x H]: −exp(A_log), so the decay e^(δ·A) is below 1
	D        Weight  // ssm_d, F32 [1 x H]: the skip
	Norm     Weight  // ssm_norm, F32 [inner/G x G]: the grouped norm's gains
	Out      Weight  // ssm_out [inner x embd]
}

// maxMamba2 bounds the Mamba2 keys: real models have inner 8192, N 128
// and 128 heads; far past that a file is not a model we can run, and the
// state is sized by them.
const maxMamba2 = 1 << 16

// loadMamba2 reads the ssm.* keys of a Mamba2 hybrid and checks that the
// heads and groups divide the inner width as the scan reads them.
func loadMamba2(l *loader, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	m := Mamba2Config{
		ConvKernel: l.uint("ssm.conv_kernel", 0, true),
		Inner:      l.uint("ssm.inner_size", 0, true),
		State:      l.uint("ssm.state_size", 0, true),
		Groups:     l.uint("ssm.group_count", 0, true),
		Heads:      l.uint("ssm.time_step_rank", 0, true),
	}
	// Nemotron's latent MoE (experts in a smaller width, with projections
	// in and out of it) is not computed here; ignoring the key would run
	// the experts on the wrong vectors.
	latent := l.uint("moe_latent_size", 0, false)
	if l.err != nil {
		return l.err
	}
	if latent > 0 {
		return bad("moe_latent_size", fmt.Sprintf("%d: latent mixture-of-experts layers are not supported yet", latent))
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"ssm.inner_size", m.Inner}, {"ssm.state_size", m.State}, {"ssm.group_count", m.Groups}, {"ssm.time_step_rank", m.Heads}} {
		if k.v <= 0 || k.v > maxMamba2 {
			return bad(k.key, fmt.Sprintf("%d must be between 1 and %d", k.v, maxMamba2))
		}
	}
	switch {
	case m.ConvKernel < 2 || m.ConvKernel > maxShortConvL:
		return bad("ssm.conv_kernel", fmt.Sprintf("%d must be between 2 and %d", m.ConvKernel, maxShortConvL))
	case m.Inner%m.Heads != 0:
		return bad("ssm.time_step_rank", fmt.Sprintf("%d heads do not divide ssm.inner_size %d", m.Heads, m.Inner))
	case m.Heads%m.Groups != 0:
		return bad("ssm.group_count", fmt.Sprintf("%d groups do not divide the %d heads (ssm.time_step_rank)", m.Groups, m.Heads))
	case int64(m.Inner)*int64(m.State) > 1<<26:
		return bad("ssm.state_size", fmt.Sprintf("ssm.inner_size %d × state %d is implausibly large", m.Inner, m.State))
	}
	c.Mamba2 = m
	return nil
}

// mamba2Sizes reads the per-layer head_count_kv and feed_forward_length
// of a Mamba2 hybrid into the layers' kinds: 0 KV heads is a Mamba2
// layer; where every layer is one branch (nemotron) a non-zero
// feed_forward_length is an FFN layer (llama.cpp's nemotron-h.cpp reads
// the two arrays the same way), and an attention layer's KV heads must
// divide head_count.
func mamba2Sizes(l *loader, a Arch, c *Config, out []LayerConfig) error {
	kv := l.uints("attention.head_count_kv", len(out), c.KVHeads)
	ff := l.uints("feed_forward_length", len(out), c.FF)
	if l.err != nil {
		return l.err
	}
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	for il := range out {
		lc := &out[il]
		lc.KVHeads, lc.FF = kv[il], ff[il]
		switch {
		case a.SingleBranch && ff[il] > 0:
			lc.Kind, lc.KVHeads = KindFFN, 0
			continue
		case kv[il] == 0:
			lc.Kind = KindMamba2
		case c.Heads%kv[il] != 0:
			return bad("attention.head_count_kv", fmt.Sprintf("layer %d: %d does not divide head_count %d", il, kv[il], c.Heads))
		}
		if !a.SingleBranch && ff[il] == 0 {
			return bad("feed_forward_length", fmt.Sprintf("layer %d: must be positive (every %s layer has an FFN)", il, a.Name))
		}
		if a.SingleBranch {
			lc.FF = 0
		}
	}
	return nil
}

// mamba2Layer locates a Mamba2 layer's weights: the pre-norm and the
// mixer, then (unless every layer is one branch) the layer's FFN.
func (w *weights) mamba2Layer(l *Layer, p string, a Arch, cfg *Config) {
	e, m := cfg.Embd, &cfg.Mamba2
	l.AttnNorm = w.vector(p+"attn_norm.weight", e)
	x := &Mamba2{
		In:     w.matrix(p+"ssm_in.weight", e, m.InProj()),
		Conv:   w.f32Matrix(p+"ssm_conv1d.weight", m.ConvKernel, m.ConvChannels()),
		DtBias: w.vector(p+"ssm_dt.bias", m.Heads),
		A:      w.f32Matrix(p+"ssm_a", 1, m.Heads),
		D:      w.f32Matrix(p+"ssm_d", 1, m.Heads),
		Norm:   w.f32Matrix(p+"ssm_norm.weight", m.Inner/m.Groups, m.Groups),
		Out:    w.matrix(p+"ssm_out.weight", m.Inner, e),
	}
	if _, ok := w.f.Tensor(p + "ssm_conv1d.bias"); ok {
		b := w.vector(p+"ssm_conv1d.bias", m.ConvChannels())
		x.ConvBias = &b
	}
	l.Mamba2 = x
	if !a.SingleBranch {
		w.ffn(l, p, a, cfg)
	}
}

// ffnLayer locates a one-branch FFN layer's weights (nemotron): the
// attn_norm that norms its input, and the dense or routed FFN.
func (w *weights) ffnLayer(l *Layer, p string, a Arch, cfg *Config) {
	l.AttnNorm = w.vector(p+"attn_norm.weight", cfg.Embd)
	if _, ok := w.f.Tensor(p + "ffn_gate_inp.weight"); ok && cfg.MoE.Experts > 0 {
		l.Experts = w.experts(p, cfg)
		if a.SharedExpert && l.Experts != nil {
			l.Experts.Shared = w.sharedExpert(p, a, cfg)
		}
		return
	}
	w.denseFFN(l, p, a, cfg, l.Config.FF)
}

// denseFFN locates a dense FFN's matrices: gate (for a gated
// activation), up and down.
func (w *weights) denseFFN(l *Layer, p string, a Arch, cfg *Config, ff int) {
	e := cfg.Embd
	if a.Block.Act.Gated() {
		l.Gate = w.matrix(p+"ffn_gate.weight", e, ff)
	}
	l.Up = w.matrix(p+"ffn_up.weight", e, ff)
	l.Down = w.matrix(p+"ffn_down.weight", ff, e)
}

// mamba2StateTerm is StateFormula's term for the Mamba2 layers, e.g. "4
// Mamba2 layers × ((4−1) taps × 384 conv channels + 8 heads × 32 head dim
// × 32 state) × 4 B"; "" without them.
func (m *Model) mamba2StateTerm() string {
	n := m.recurrentOf(KindMamba2)
	if n == 0 {
		return ""
	}
	c := &m.Mamba2
	return fmt.Sprintf("%d Mamba2 %s × ((%d−1) taps × %d conv channels + %d heads × %d head dim × %d state) × 4 B",
		n, plural(n, "layer"), c.ConvKernel, c.ConvChannels(), c.Heads, c.HeadDim(), c.State)
}

// mamba2StateBytes is the state of every Mamba2 layer.
func (m *Model) mamba2StateBytes() int64 {
	return int64(m.recurrentOf(KindMamba2)) * int64(m.Mamba2.ConvFloats()+m.Mamba2.SSMFloats()) * 4
}
