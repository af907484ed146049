package plan

import (
	"fmt"
	"math"
	"slices"

	"vkchat/runtime/arch"
)

// Plan is a model resolved for a context of Context positions.
type Plan struct {
	Arch    string
	Context int
	Embd    int
	Vocab   int
	// Input runs once per batch before the layers; Head after them, on the
	// rows whose logits are wanted.
	Input  []Op
	Layers []Layer
	Head   []Op
	// Rotations are the distinct RoPEs the Rope ops index.
	Rotations []Rotation

	// Model-wide facts an executor sizes its buffers and reports its
	// memory by: the query heads and the model's own head size (a gated
	// Q's), the widest layer's widths, the norms' epsilon; the expert,
	// DeltaNet and short-conv shapes where the model has such layers.
	Heads, HeadDim int
	Widest         Widths
	NormEps        float32
	MoEShape       MoEShape
	DeltaNetShape  DeltaNetShape
	ShortConvL     int
	Mamba2Shape    Mamba2Shape
	// The weights: every tensor's bytes, what one token reads of them
	// (all but the experts it is not routed to), the expert banks', and
	// the 2-D matrices products read (an executor may repack them; an
	// untied token embedding is only gathered, so it is not one).
	WeightBytes, ActiveWeightBytes, ExpertBytes int64
	Matrices                                    []Weight
	// StateFormula says how the recurrent state adds up ("" without).
	StateFormula string
	// Cache is the KV cache's slots, State the recurrent layers'.
	Cache []CacheSlot
	State []StateSlot

	// MTP is the model's multi-token-prediction head as a plan of its own
	// (mtp.go): its input takes a hidden state per row beside the token,
	// and it keeps its own cache. Nil without one. MTPBlock is the head's
	// block index in the file (set on the MTP plan itself).
	MTP      *Plan
	MTPBlock int
}

// Layer is one block's ops, in order.
type Layer struct {
	Index int
	Mixer Mixer
	Ops   []Op
}

// Mixer is what mixes positions in a layer: attention over a cache, or a
// recurrence over a state.
type Mixer uint8

const (
	MixAttention Mixer = iota
	MixDeltaNet
	MixShortConv
	MixMamba2
	// MixNone: a layer with no mixer, its FFN alone (nemotron_h).
	MixNone
)

func (m Mixer) String() string {
	switch m {
	case MixDeltaNet:
		return "deltanet"
	case MixShortConv:
		return "shortconv"
	case MixMamba2:
		return "mamba2"
	case MixNone:
		return "ffn"
	}
	return "attention"
}

// Resolve turns a loaded model into its plan for a context of ctx
// positions (which picks LongRoPE's factor set and sizes the cache slots).
// It is the only place that reads a declaration's flags; an error names
// the layer and what is inconsistent.
func Resolve(m *arch.Model, ctx int) (*Plan, error) {
	if ctx <= 0 {
		return nil, fmt.Errorf("plan: context size %d must be positive", ctx)
	}
	c := &m.Config
	p := &Plan{Arch: c.Arch, Context: ctx, Embd: c.Embd, Vocab: c.Vocab,
		Heads: c.Heads, HeadDim: c.HeadDim, Widest: m.Widest(), NormEps: c.NormEps,
		MoEShape: c.MoE, DeltaNetShape: c.DeltaNet, ShortConvL: c.ShortConvL, Mamba2Shape: c.Mamba2,
		StateFormula: m.StateFormula()}
	if m.File != nil { // not a model assembled by hand (tests)
		p.WeightBytes, p.ActiveWeightBytes, p.ExpertBytes = m.WeightBytes(), m.ActiveWeightBytes(), m.ExpertBytes()
		p.Matrices = matrices(m)
	}
	p.Input = append(p.Input, Embed{Table: m.TokenEmbd, Scale: one(c.EmbedScale)})
	if m.PLE != nil {
		p.Input = append(p.Input, PerLayerInputs{PLE: m.PLE})
	}
	r := resolver{m: m, p: p, ctx: ctx, cacheOf: make([]int, len(m.Layers))}
	for il := range m.Layers {
		l, err := r.layer(il)
		if err != nil {
			return nil, fmt.Errorf("plan: %s layer %d: %w", c.Arch, il, err)
		}
		p.Layers = append(p.Layers, l)
	}
	p.Head = append(p.Head, Norm{In: X, Out: In, Width: c.Embd, Row: c.Embd, Weight: &m.OutputNorm, Eps: c.NormEps},
		Products{In: In, Outs: []Product{{Out: Logits, W: m.Output}}})
	if ls := one(c.LogitScale); ls != 1 {
		p.Head = append(p.Head, Scale{Buf: Logits, Width: c.Vocab, By: ls})
	}
	if c.FinalSoftcap != 0 {
		p.Head = append(p.Head, Softcap{Buf: Logits, Width: c.Vocab, Cap: c.FinalSoftcap})
	}
	mp, err := resolveMTP(m, ctx)
	if err != nil {
		return nil, err
	}
	p.MTP = mp
	return p, nil
}

type resolver struct {
	m       *arch.Model
	p       *Plan
	ctx     int
	cacheOf []int // per layer: its cache slot, -1 without
}

// one is x, or 1 where a Config built by hand (tests) left a multiplier unset.
func one(x float32) float32 {
	if x == 0 {
		return 1
	}
	return x
}

// geometry is a layer's head size, KV heads, FF width and rotated dims,
// the model-wide ones where a hand-built LayerConfig leaves them unset.
func (r *resolver) geometry(il int) arch.LayerConfig {
	c, lc := &r.m.Config, r.m.Layers[il].Config
	if lc.HeadDim == 0 {
		if lc == (arch.LayerConfig{}) {
			lc = arch.LayerConfig{Rope: true, RopeBase: c.Rope.Base, RopeScale: c.Rope.Scale}
		}
		lc.HeadDim, lc.KVHeads, lc.FF, lc.RopeDims, lc.KVLayer = c.HeadDim, c.KVHeads, c.FF, c.Rope.Dims, il
	}
	if lc.RopeDims == 0 {
		lc.RopeDims = c.Rope.Dims
	}
	return lc
}

func (r *resolver) layer(il int) (Layer, error) {
	c, L := &r.m.Config, &r.m.Layers[il]
	lc := r.geometry(il)
	out := Layer{Index: il}
	r.cacheOf[il] = -1
	if lc.Window < 0 {
		return out, fmt.Errorf("sliding window %d is negative", lc.Window)
	}
	if lc.HeadDim <= 0 || lc.KVHeads < 0 || c.Heads <= 0 {
		return out, fmt.Errorf("head size %d, %d heads, %d KV heads", lc.HeadDim, c.Heads, lc.KVHeads)
	}
	var ops []Op
	add := func(o ...Op) { ops = append(ops, o...) }
	branchIn := X
	if L.AttnNorm.Data != nil {
		add(Norm{In: X, Out: In, Width: c.Embd, Row: c.Embd, Weight: &L.AttnNorm, Eps: c.NormEps})
		branchIn = In
	}
	switch {
	case lc.Kind == arch.KindFFN:
		out.Mixer = MixNone
		add(r.ffn(il, lc, branchIn)...)
		out.Ops = ops
		return out, nil
	case L.Mamba2 != nil:
		out.Mixer = MixMamba2
		add(Mamba2{In: branchIn, Out: Out, Shape: c.Mamba2, W: L.Mamba2, State: r.state(il, MixMamba2), Eps: c.NormEps},
			r.residual(nil))
	case L.ShortConv != nil:
		out.Mixer = MixShortConv
		add(ShortConv{In: branchIn, Out: Out, L: c.ShortConvL, W: L.ShortConv, State: r.state(il, MixShortConv)},
			r.residual(nil))
	case L.DeltaNet != nil:
		out.Mixer = MixDeltaNet
		add(DeltaNet{In: branchIn, Out: Out, Shape: c.DeltaNet, W: L.DeltaNet, State: r.state(il, MixDeltaNet), Eps: c.NormEps},
			r.residual(L.PostAttnNorm))
	case L.MLA != nil:
		ops = append(ops, r.mla(il, lc, branchIn)...)
	default:
		att, err := r.attention(il, lc, branchIn)
		if err != nil {
			return out, err
		}
		add(att...)
	}
	if L.Experts != nil || L.Up.Data != nil { // a one-branch mixer layer has no FFN
		add(r.ffn(il, lc, X)...)
	}
	if L.PLE != nil {
		add(PerLayerEmbedding{Layer: il, W: L.PLE, Eps: c.NormEps})
	}
	if L.OutScale != nil {
		add(ScaleStream{W: *L.OutScale})
	}
	out.Ops = ops
	return out, nil
}

// attention is an attention layer's branch: products, Q/K(/V) norms, RoPE,
// the attention over its cache slot, the output product and the residual.
func (r *resolver) attention(il int, lc arch.LayerConfig, in Buf) ([]Op, error) {
	c, L := &r.m.Config, &r.m.Layers[il]
	hd := lc.HeadDim
	shared := lc.KVLayer != il
	if lc.KVLayer < 0 || lc.KVLayer > il {
		return nil, fmt.Errorf("reads the cache of layer %d, not an earlier one", lc.KVLayer)
	}
	if shared && r.cacheOf[lc.KVLayer] < 0 {
		return nil, fmt.Errorf("reads the cache of layer %d, which has none", lc.KVLayer)
	}
	var ops []Op
	qp := Product{Out: Q, W: L.Wq, Bias: L.Bq}
	if c.Block.AttnGate {
		qp.GatedHeads, qp.HeadDim = true, hd
	}
	prods := Products{In: in, Outs: []Product{qp}}
	if !shared {
		prods.Outs = append(prods.Outs, Product{Out: K, W: L.Wk, Bias: L.Bk}, Product{Out: V, W: L.Wv, Bias: L.Bv})
	}
	ops = append(ops, prods)
	qw, kvw := c.Heads*hd, lc.KVWidth()
	qRow, kRow := hd, hd
	if c.Block.QKNorm == arch.QKNormFull {
		qRow, kRow = qw, kvw
	}
	if L.QNorm != nil {
		ops = append(ops, Norm{In: Q, Out: Q, Width: qw, Row: qRow, Weight: L.QNorm, Eps: c.NormEps})
	}
	if L.KNorm != nil && !shared {
		ops = append(ops, Norm{In: K, Out: K, Width: kvw, Row: kRow, Weight: L.KNorm, Eps: c.NormEps})
	}
	if c.Block.VNorm && !shared {
		ops = append(ops, Norm{In: V, Out: V, Width: kvw, Row: hd, Eps: c.NormEps})
	}
	if lc.Rope {
		rot := Rotation{Dims: lc.RopeDims, NeoX: c.Rope.NeoX, Base: lc.RopeBase, Scale: one(lc.RopeScale),
			AttnFactor: one(c.Rope.AttnFactor), YaRN: c.Rope.YaRN}
		if !lc.NoRopeFactors {
			rot.Factors = c.Rope.Factors(r.ctx)
		}
		if !(rot.Base > 0) {
			return nil, fmt.Errorf("RoPE base %g must be positive", rot.Base)
		}
		if rot.Dims <= 0 || rot.Dims > hd || rot.Dims%2 != 0 {
			return nil, fmt.Errorf("RoPE rotates %d of %d dims: must be even, positive and at most the head size", rot.Dims, hd)
		}
		rope := Rope{Bufs: []Buf{Q}, Widths: []int{qw}, HeadDim: hd, Table: r.rotation(rot)}
		if !shared {
			rope.Bufs, rope.Widths = append(rope.Bufs, K), append(rope.Widths, kvw)
		}
		ops = append(ops, rope)
	}
	if t := c.QTemperature; t.Beta != 0 {
		if t.Length <= 0 {
			return nil, fmt.Errorf("attention temperature steps every %d positions: must be positive", t.Length)
		}
		ops = append(ops, PositionScale{Buf: Q, Width: qw, T: t})
	}
	scale := c.AttnScale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	if c.ScaleQ {
		ops = append(ops, Scale{Buf: Q, Width: qw, By: scale})
		scale = 1
	}
	slot := lc.KVLayer
	if !shared {
		r.cacheOf[il] = len(r.p.Cache)
		r.p.Cache = append(r.p.Cache, CacheSlot{Layer: il, KVHeads: lc.KVHeads, HeadDim: hd, Window: lc.Window})
		slot = il
	}
	ops = append(ops, Attention{Heads: c.Heads, KVHeads: lc.KVHeads, HeadDim: hd, Scale: scale, Softcap: c.AttnSoftcap,
		Window: lc.Window, Sinks: L.Sinks, Cache: r.cacheOf[slot], Shared: shared})
	if c.Block.AttnGate {
		ops = append(ops, AttnGate{Width: qw})
	}
	ops = append(ops, Products{In: Attn, Outs: []Product{{Out: Out, W: L.Wo, Bias: L.Bo}}}, r.residual(L.PostAttnNorm))
	return ops, nil
}

// mla is a latent-attention layer's branch: the MLA op over its cache
// slot (one row of latent and RoPE key per position), the output product
// and the residual. The executor's buffers grow to the absorbed query
// (heads × the cached row) and the row itself.
func (r *resolver) mla(il int, lc arch.LayerConfig, in Buf) []Op {
	c, L := &r.m.Config, &r.m.Layers[il]
	m := c.MLA
	row := m.CacheRow()
	w := &r.p.Widest
	w.Q = max(w.Q, c.Heads*row, c.Heads*m.V)
	w.KV = max(w.KV, row)
	w.HeadDim, w.KVHeads = max(w.HeadDim, row), max(w.KVHeads, 1)
	rot := Rotation{Dims: m.Rope, NeoX: c.Rope.NeoX, Base: lc.RopeBase, Scale: one(lc.RopeScale),
		AttnFactor: one(c.Rope.AttnFactor), YaRN: c.Rope.YaRN, Factors: c.Rope.Factors(r.ctx)}
	r.cacheOf[il] = len(r.p.Cache)
	r.p.Cache = append(r.p.Cache, CacheSlot{Layer: il, KVHeads: 1, HeadDim: row, Latent: m.KVLora,
		Decompressed: c.Heads * (m.Nope + m.Rope + m.V)})
	return []Op{
		MLA{In: in, Heads: c.Heads, Shape: m, W: L.MLA, Scale: c.AttnScale, Eps: c.NormEps, Table: r.rotation(rot), Cache: r.cacheOf[il]},
		Products{In: Attn, Outs: []Product{{Out: Out, W: L.Wo}}},
		r.residual(nil),
	}
}

// ffn is a layer's FFN branch: the pre-norm, the dense GLU or the routed
// experts (and a shared expert), the residual. in is the branch's input
// where the layer has no FFN norm of its own (an FFN layer's attn_norm
// has made it).
func (r *resolver) ffn(il int, lc arch.LayerConfig, in Buf) []Op {
	c, L := &r.m.Config, &r.m.Layers[il]
	var ops []Op
	if L.FFNNorm.Data != nil {
		ops = append(ops, Norm{In: X, Out: In, Width: c.Embd, Row: c.Embd, Weight: &L.FFNNorm, Eps: c.NormEps})
		in = In
	}
	x := L.Experts
	if (x == nil || L.PostDenseNorm != nil) && c.Block.Act.Gated() {
		ops = append(ops, Products{In: in, Outs: []Product{{Out: Gate, W: L.Gate}, {Out: Up, W: L.Up}}},
			GLU{Width: lc.FF, Act: c.Block.Act},
			Products{In: Gate, Outs: []Product{{Out: Out, W: L.Down}}})
	} else if x == nil || L.PostDenseNorm != nil {
		// an ungated activation: up's product goes to Gate, where GLU
		// activates it alone
		ops = append(ops, Products{In: in, Outs: []Product{{Out: Gate, W: L.Up}}},
			GLU{Width: lc.FF, Act: c.Block.Act},
			Products{In: Gate, Outs: []Product{{Out: Out, W: L.Down}}})
	}
	if x == nil {
		return append(ops, r.residual(L.PostFFNNorm))
	}
	moe := MoE{In: in, Out: Out, Gating: c.MoE.Gating, Rule: c.MoE.Rule(), SelectBias: x.SelectBias, Experts: c.MoE.Experts, K: c.MoE.ExpertsUsed,
		FF: c.MoE.ExpertFF, Act: c.Block.Act, Router: x.Router, RouterBias: x.RouterBias,
		Gate: x.Gate, Up: x.Up, Down: x.Down, FusedGateUp: x.FusedGateUp,
		GateBias: x.GateBias, UpBias: x.UpBias, DownBias: x.DownBias, DownScale: x.DownScale}
	if L.PostDenseNorm != nil {
		// experts beside the dense FFN (Gemma 4): the dense branch, now in
		// Out, gets its own post-norm; the experts read their own pre-norm
		// of the stream, their router a plain norm of it, and their sum
		// is normed and added to Out
		ops = append(ops, Norm{In: Out, Out: Out, Width: c.Embd, Row: c.Embd, Weight: L.PostDenseNorm, Eps: c.NormEps})
		if x.PreNorm != nil {
			ops = append(ops, Norm{In: X, Out: In, Width: c.Embd, Row: c.Embd, Weight: x.PreNorm, Eps: c.NormEps})
			moe.In = In
		}
		if x.RouterScale != nil {
			// 1/sqrtf(embd) in float32, as llama.cpp computes it
			moe.RouterIn = &RouterInput{From: X, Scale: 1 / float32(math.Sqrt(float64(c.Embd))), Weight: *x.RouterScale, Eps: c.NormEps}
		}
		moe.PostNorm, moe.Eps, moe.Add = x.PostNorm, c.NormEps, true
	}
	ops = append(ops, moe)
	if s := x.Shared; s != nil {
		ops = append(ops, SharedExpert{In: in, Out: Out, Act: c.Block.Act, Gate: s.Gate, Up: s.Up, Down: s.Down, Scale: s.Scale})
	}
	return append(ops, r.residual(L.PostFFNNorm))
}

func (r *resolver) residual(post *arch.Weight) Residual {
	return Residual{Branch: Out, PostNorm: post, Eps: r.m.NormEps, Scale: one(r.m.ResidualScale)}
}

// rotation returns the index of rot in the plan's rotations, adding it.
func (r *resolver) rotation(rot Rotation) int {
	for i, have := range r.p.Rotations {
		if have.Dims == rot.Dims && have.NeoX == rot.NeoX && have.Base == rot.Base && have.Scale == rot.Scale &&
			have.AttnFactor == rot.AttnFactor && slices.Equal(have.Factors, rot.Factors) && have.YaRN == rot.YaRN {
			return i
		}
	}
	r.p.Rotations = append(r.p.Rotations, rot)
	return len(r.p.Rotations) - 1
}

// state lays out a recurrent layer's state slot.
func (r *resolver) state(il int, kind Mixer) int {
	c := &r.m.Config
	s := StateSlot{Layer: il, Mixer: kind}
	switch kind {
	case MixDeltaNet:
		s.ConvFloats, s.MatrixFloats = c.DeltaNet.ConvFloats(), c.DeltaNet.MatrixFloats()
	case MixShortConv:
		s.ConvFloats = c.ShortConvStateFloats()
	case MixMamba2:
		s.ConvFloats, s.MatrixFloats = c.Mamba2.ConvFloats(), c.Mamba2.SSMFloats()
	}
	r.p.State = append(r.p.State, s)
	return len(r.p.State) - 1
}

// matrices is every 2-D tensor of the model's file but an untied token
// embedding (which is gathered a row at a time, never multiplied).
func matrices(m *arch.Model) []Weight {
	var emb *byte
	if len(m.TokenEmbd.Data) > 0 && (len(m.Output.Data) == 0 || &m.Output.Data[0] != &m.TokenEmbd.Data[0]) {
		emb = &m.TokenEmbd.Data[0]
	}
	var out []Weight
	f := m.File
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Dims) != 2 {
			continue
		}
		data := f.TensorData(t)
		if len(data) == 0 || &data[0] == emb {
			continue
		}
		out = append(out, Weight{Name: t.Name, Type: t.Type, Cols: int(t.Dims[0]), Rows: int(t.Dims[1]), Data: data})
	}
	return out
}
