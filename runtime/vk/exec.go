package vk

import (
	"fmt"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"

	"vkchat/runtime/vk/vulkan"
)

// The Vulkan backend executes a model's plan (runtime/plan), as the CPU
// backend does: compile turns each section's ops (the input, every layer,
// the head) into steps, one function per op kind, before a device is
// opened; recording runs the steps into a command buffer. Where a kernel
// computes more than one op, the op that starts the run looks at the ops
// after it and takes them in (the peephole below); what is fused is read
// from the ops alone:
//
//   - a branch norm (Norm of X into In) is folded into every product,
//     router, mixer or expert that reads In;
//   - a Q|K|V product takes the Q/K/V norms, the RoPE and the Q scale
//     after it (rope.go: a rope.comp dispatch, or the product's epilogue);
//   - gate and up products followed by a GLU are one paired product with
//     the activation as its epilogue;
//   - a product (or mixer, or the experts' combine) writing a branch's
//     output followed by a Residual without a post-norm or scale adds to
//     X as its epilogue; any other Residual is residual.comp over Out;
//   - the head's logit scale and soft-cap are one logits.comp dispatch.
//
// An op kind, or an op in a form, that no kernel here computes is refused
// at compile with backend.ErrUnsupported naming it, so a plan with ops
// added for new families fails cleanly on this backend until it learns
// them.

// walk is one recording of a section's steps: a body of s.cap tokens, or
// the head (last: the last token's logits only).
type walk struct {
	r    *vulkan.Recorder
	s    bodyShape
	last bool
}

// step records one op (or a fused run of ops) of a section.
type step func(b *Backend, w *walk) error

// program is a plan compiled: the input steps, each layer's, the head's.
type program struct {
	input  []step
	layers [][]step
	head   []step
}

// Sections of a plan, as an opRef names them (a layer is its index).
const (
	secInput = -1
	secHead  = -2
)

// opRef names an op of the plan: its section and place in it. Weights are
// bound per op (weights.go) and a step finds its own by its ref.
type opRef struct{ sec, i int }

// unsupportedOp is compile's refusal of what no kernel computes.
func unsupportedOp(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), backend.ErrUnsupported)
}

// compile turns p into steps, refusing what this backend cannot run.
func compile(p *plan.Plan) (*program, error) {
	prog := &program{}
	sinks := -1 // whether the attention layers have sinks: -1 none seen
	sec := func(s int, ops []plan.Op) ([]step, error) {
		c := &compiler{p: p, sec: s, ops: ops, norm: -1, sinks: &sinks}
		return c.compile()
	}
	var err error
	if prog.input, err = sec(secInput, p.Input); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	for _, l := range p.Layers {
		// an expert form without kernels is named before the ops around
		// it that only it brings (gemma4's norm of the dense branch in
		// place, ahead of the experts beside it)
		for _, op := range l.Ops {
			if o, ok := op.(plan.MoE); ok {
				if err := moeForm(o); err != nil {
					return nil, fmt.Errorf("layer %d: %w", l.Index, err)
				}
			}
		}
		st, err := sec(l.Index, l.Ops)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", l.Index, err)
		}
		prog.layers = append(prog.layers, st)
	}
	if prog.head, err = sec(secHead, p.Head); err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	return prog, nil
}

// compiler walks one section's ops.
type compiler struct {
	p     *plan.Plan
	sec   int
	ops   []plan.Op
	i     int // the op being compiled; a fusing op moves it past what it takes in
	norm  int // the Norm op whose output In is, folded into In's readers; -1: In not written
	sinks *int
	// branch names the last branch whose output went to Out, for the
	// label of the Residual that adds it
	branch string
	steps  []step
}

func (c *compiler) ref(i int) opRef { return opRef{c.sec, i} }

// name labels a dispatch of this section ("L3 qkv").
func (c *compiler) name(s string) string {
	if c.sec >= 0 {
		return fmt.Sprintf("L%d %s", c.sec, s)
	}
	return s
}

func (c *compiler) add(s step) { c.steps = append(c.steps, s) }

// next is the op after the current one (nil at the end), which a fusing op
// may take in with c.take.
func (c *compiler) next() plan.Op {
	if c.i+1 < len(c.ops) {
		return c.ops[c.i+1]
	}
	return nil
}

func (c *compiler) take() { c.i++ }

func (c *compiler) compile() ([]step, error) {
	for c.i = 0; c.i < len(c.ops); c.i++ {
		if err := c.op(c.ops[c.i]); err != nil {
			return nil, err
		}
	}
	return c.steps, nil
}

// op compiles one op kind (and what it fuses).
func (c *compiler) op(op plan.Op) error {
	switch o := op.(type) {
	case plan.Embed:
		return c.embed(o)
	case plan.PerLayerInputs:
		c.add(func(b *Backend, w *walk) error { return b.recordPLEInputs(w.r, w.s) })
		return nil
	case plan.Norm:
		return c.branchNorm(o)
	case plan.Products:
		return c.products(o)
	case plan.Attention:
		return c.attention(o)
	case plan.AttnGate:
		label := c.name("attention gate")
		c.add(func(b *Backend, w *walk) error { return b.recordAttnGate(w.r, label, o.Width, w.s) })
		return nil
	case plan.MoE:
		return c.moe(o)
	case plan.DeltaNet:
		return c.deltaNet(o)
	case plan.ShortConv:
		return c.shortConv(o)
	case plan.Mamba2:
		return c.mamba2(o)
	case plan.MLA:
		return c.mla(o)
	case plan.Residual:
		return c.residual(o)
	case plan.PerLayerEmbedding:
		return c.perLayerEmbedding(o)
	case plan.MTPInput:
		return c.mtpInput(o)
	case plan.ScaleStream:
		c.wroteX()
		ref, label := c.ref(c.i), c.name("output scale")
		c.add(func(b *Backend, w *walk) error { return b.recordScaleStream(w.r, label, b.weights.at(ref).scale, w.s) })
		return nil
	case plan.Scale, plan.Softcap:
		return c.logits()
	case plan.Rope, plan.GLU, plan.SharedExpert:
		// computed only as part of the op before them
		return unsupportedOp("%s outside the run of ops a kernel computes it in", opName(op))
	}
	return unsupportedOp("op %s has no Vulkan kernel", opName(op))
}

// opName is an op's kind as the plan names it ("plan.Mamba2").
func opName(op plan.Op) string { return fmt.Sprintf("%T", op) }

func (c *compiler) embed(o plan.Embed) error {
	ref := c.ref(c.i)
	c.add(func(b *Backend, w *walk) error { return b.recordEmbed(w.r, w.s, b.weights.at(ref).mats[0], o.Scale) })
	return nil
}

// branchNorm: the RMS norm of X into In is computed by In's readers.
func (c *compiler) branchNorm(o plan.Norm) error {
	if o.In == plan.Out && o.Out == plan.Out && o.Weight != nil && o.Width == c.p.Embd && o.Row == o.Width {
		// a branch's output normed in place before another branch adds
		// to it (gemma4's post_ffw_norm_1): residual.comp storing, not
		// adding
		ref, label := c.ref(c.i), c.name("out norm")
		c.add(func(b *Backend, w *walk) error {
			bw := b.weights.at(ref)
			return b.recordNormInto(w.r, label, b.act.o, bw.vec, b.act.o, bw.eps, 1, false, w.s)
		})
		return nil
	}
	if o.In != plan.X || o.Out != plan.In || o.Weight == nil || o.Width != c.p.Embd || o.Row != o.Width {
		return unsupportedOp("a norm of %v into %v (%d values in rows of %d, weight %v) outside a Q/K/V prologue", o.In, o.Out, o.Width, o.Row, o.Weight != nil)
	}
	c.norm = c.i
	return nil
}

// input is what a reader of buffer k binds: the stream (with the pending
// branch norm folded in when k is In), or another activation.
type input struct {
	buf  plan.Buf
	norm *opRef // the Norm op whose weight the reader applies, or nil
}

func (c *compiler) input(k plan.Buf) (input, error) {
	switch k {
	case plan.In:
		if c.norm < 0 {
			return input{}, unsupportedOp("a read of %v before a norm writes it", k)
		}
		r := c.ref(c.norm)
		return input{buf: k, norm: &r}, nil
	case plan.X, plan.Attn, plan.Gate:
		return input{buf: k}, nil
	}
	return input{}, unsupportedOp("a product of %v", k)
}

// bind fills op's x, its stride and its norm from in.
func (b *Backend) bind(op *matvecOp, in input) {
	switch in.buf {
	case plan.Attn:
		op.x, op.xstride = b.act.att, b.act.qStride
	case plan.Gate:
		op.x, op.xstride = b.act.h, b.act.ffStride
	default:
		op.x, op.xstride = b.act.x, b.act.xStride
	}
	if in.norm != nil {
		op.norm = b.weights.at(*in.norm).vec
		op.eps = b.weights.at(*in.norm).eps
	}
}

// fuseResidual takes in the next op when it is the residual add of Out
// with nothing between (no post-norm, no scale), which the op writing Out
// does as its epilogue; false: Out is written and the Residual op adds it.
func (c *compiler) fuseResidual(branch string) bool {
	c.branch = branch
	if r, ok := c.next().(plan.Residual); ok && r.Branch == plan.Out && r.PostNorm == nil && r.Scale == 1 {
		c.take()
		c.wroteX()
		return true
	}
	return false
}

// wroteX notes that X changed: In, the norm of the X before, is no longer
// what a reader folding the norm in would compute.
func (c *compiler) wroteX() { c.norm = -1 }

// out is where a branch's last kernel writes: X with the residual add, or
// Out for a Residual op to add.
func (b *Backend) out(op *matvecOp, fused bool) {
	op.y, op.ystride, op.epi = b.act.x, b.act.xStride, epiResidual
	if !fused {
		op.y, op.epi = b.act.o, epiStore
	}
}

func (c *compiler) products(o plan.Products) error {
	if len(o.Outs) == 0 {
		return unsupportedOp("a products op without products")
	}
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	ref := c.ref(c.i)
	switch first := o.Outs[0]; {
	case first.Out == plan.Q:
		return c.attentionInputs(o, in)
	case len(o.Outs) == 2 && first.Out == plan.Gate && o.Outs[1].Out == plan.Up && first.Bias == nil && o.Outs[1].Bias == nil:
		glu, ok := c.next().(plan.GLU)
		if !ok {
			return unsupportedOp("gate and up products not followed by a GLU")
		}
		c.take()
		act, err := activation(glu.Act)
		if err != nil {
			return err
		}
		name := c.name
		c.add(func(b *Backend, w *walk) error {
			bw := b.weights.at(ref)
			op := matvecOp{label: name("gate+up"), m: bw.mats[0], m2: bw.mats[1], y: b.act.h, y2: b.act.h2, ystride: b.act.ffStride,
				tokens: w.s.cap, step: b.graph.step, act: cpuAct(glu.Act, act, bw.mats[0]), xq: b.act.xq}
			b.bind(&op, in)
			return b.recordPair(w.r, op, name("gate"), name("up·act(gate)"))
		})
		return nil
	case len(o.Outs) == 1 && first.Out == plan.Gate && first.Bias == nil && !first.GatedHeads:
		// an ungated FFN's up product (into Gate, as the plan names it),
		// then its activation in place
		glu, ok := c.next().(plan.GLU)
		if !ok || glu.Act != plan.ActReLU2 {
			return unsupportedOp("an up product without a gate not followed by a ReLU²")
		}
		c.take()
		name := c.name
		c.add(func(b *Backend, w *walk) error {
			op := matvecOp{label: name("up"), m: b.weights.at(ref).mats[0], y: b.act.h, ystride: b.act.ffStride, tokens: w.s.cap, step: b.graph.step, xq: b.act.xq}
			b.bind(&op, in)
			if err := b.d.matvec(w.r, op); err != nil {
				return err
			}
			return b.recordReLU2(w.r, name("relu²"), b.act.h, glu.Width, b.act.ffStride, 1, w.s)
		})
		return nil
	case len(o.Outs) == 1 && first.Out == plan.Out && !first.GatedHeads:
		label := map[plan.Buf]string{plan.Attn: "wo", plan.Gate: "down"}[o.In]
		if label == "" {
			label = "product"
		}
		fused := c.fuseResidual(map[plan.Buf]string{plan.Attn: "attention out", plan.Gate: "ffn out"}[o.In])
		label = c.name(label)
		c.add(func(b *Backend, w *walk) error {
			bw := b.weights.at(ref)
			// a bias (gpt-oss's Wo) is added to the product before the residual (BIAS)
			op := matvecOp{label: label, m: bw.mats[0], rbias: bw.biasAt(0), tokens: w.s.cap, step: b.graph.step, xq: b.act.xq}
			b.bind(&op, in)
			b.out(&op, fused)
			return b.d.matvec(w.r, op)
		})
		return nil
	case len(o.Outs) == 1 && first.Out == plan.Logits && first.Bias == nil && !first.GatedHeads:
		c.add(func(b *Backend, w *walk) error {
			op := matvecOp{label: "output", m: b.weights.at(ref).mats[0], y: b.act.logits, ystride: b.plan.Vocab,
				tokens: w.s.cap, last: w.last, step: b.graph.step, xq: b.act.xq}
			b.bind(&op, in)
			return b.d.matvec(w.r, op)
		})
		return nil
	}
	var outs []string
	for _, pd := range o.Outs {
		outs = append(outs, pd.Out.String())
	}
	return unsupportedOp("products of %v into %v", o.In, outs)
}

// actSiLUCPU and actSwiGLUOAICPU are glu.glsl's ACT for SiLU and
// swiglu_oai as the CPU backend rounds them.
const (
	actSiLUCPU      = 3
	actSwiGLUOAICPU = 4
)

// cpuAct is the ACT a gated product of m takes for a (act its
// activation's): SiLU or swiglu_oai as the CPU's where the model's path
// rounds as the CPU backend's (Matrix.cpuOrder), else act.
func cpuAct(a plan.Activation, act uint32, m *Matrix) uint32 {
	if m == nil || !m.cpuOrder {
		return act
	}
	switch a {
	case plan.ActSiLU:
		return actSiLUCPU
	case plan.ActSwiGLUOAI:
		return actSwiGLUOAICPU
	}
	return act
}

// activation is matvec.comp's ACT for a.
func activation(a plan.Activation) (uint32, error) {
	switch a {
	case plan.ActSiLU:
		return 0, nil
	case plan.ActGELUTanh:
		return actGELU, nil
	case plan.ActSwiGLUOAI:
		return 2, nil // glu.glsl's swiglu_oai
	}
	return 0, unsupportedOp("activation %v", a)
}

// recordPair records gate and up (op.m, op.m2) with act(gate)·up: one
// paired dispatch when their types match, else the gate, then the up
// product with the activation as its epilogue.
func (b *Backend) recordPair(r *vulkan.Recorder, op matvecOp, gateLabel, upLabel string) error {
	if op.m.Type == op.m2.Type {
		return b.d.matvec(r, op)
	}
	gate := op
	gate.label, gate.m2, gate.rbias2 = gateLabel, nil, nil
	if err := b.d.matvec(r, gate); err != nil {
		return err
	}
	up := op
	up.label, up.m, up.m2, up.epi, up.rbias, up.rbias2 = upLabel, op.m2, nil, epiSwiGLU, op.rbias2, nil
	return b.d.matvec(r, up)
}

// qkvPrologue is what rope.comp (or the Q|K|V product's epilogue) computes
// after the product: the Q/K norms' form and weights, the V norm, the
// rotation and the Q scale.
type qkvPrologue struct {
	qkNorm       uint32 // rope.glsl's QKNORM: 0 none, 1 per head, 2 over the full width
	qNorm, kNorm *opRef
	vNorm        bool
	rope         bool
	qScale, eps  float32
	temp         plan.Temperature // Q's attention temperature (PositionScale)
}

// attentionInputs compiles a Q(|K|V) product and the Q/K/V norms, RoPE and
// Q scale after it, up to the attention they feed.
func (c *compiler) attentionInputs(o plan.Products, in input) error {
	ref := c.ref(c.i)
	shared := len(o.Outs) == 1
	if !shared && (len(o.Outs) != 3 || o.Outs[1].Out != plan.K || o.Outs[2].Out != plan.V || o.Outs[1].GatedHeads || o.Outs[2].GatedHeads) {
		return unsupportedOp("a Q product with %d others, not K and V", len(o.Outs)-1)
	}
	pro := qkvPrologue{qScale: 1, eps: c.p.NormEps}
	var att *plan.Attention
	var norms []int // the Q and K norms, checked against the attention's heads
	for att == nil {
		c.take()
		if c.i >= len(c.ops) {
			return unsupportedOp("Q, K and V with no attention after them")
		}
		switch x := c.ops[c.i].(type) {
		case plan.Norm:
			if x.In != x.Out {
				return unsupportedOp("a norm of %v into %v between the Q|K|V product and the attention", x.In, x.Out)
			}
			r := c.ref(c.i)
			pro.eps = x.Eps
			switch x.In {
			case plan.Q:
				pro.qNorm = &r
				norms = append(norms, c.i)
			case plan.K:
				pro.kNorm = &r
				norms = append(norms, c.i)
			case plan.V:
				pro.vNorm = true
				norms = append(norms, c.i)
			default:
				return unsupportedOp("a norm of %v before the attention", x.In)
			}
		case plan.Rope:
			want := []plan.Buf{plan.Q, plan.K}
			if shared {
				want = want[:1]
			}
			if len(x.Bufs) != len(want) || x.Bufs[0] != want[0] || (len(want) == 2 && x.Bufs[1] != want[1]) {
				return unsupportedOp("a RoPE of %v", x.Bufs)
			}
			pro.rope = true
		case plan.Scale:
			if x.Buf != plan.Q {
				return unsupportedOp("a scale of %v before the attention", x.Buf)
			}
			pro.qScale = x.By
		case plan.PositionScale:
			if x.Buf != plan.Q || pro.temp.Beta != 0 || !(x.T.Length > 0) {
				return unsupportedOp("a position scale of %v (β %g every %d positions) before the attention", x.Buf, x.T.Beta, x.T.Length)
			}
			pro.temp = x.T
		case plan.Attention:
			att = &x
		default:
			return unsupportedOp("%s between the Q|K|V product and the attention", opName(x))
		}
	}
	// the norms' form: per head, or over the whole width (Q's decides, a
	// head's width being the whole of a single K head's)
	for _, i := range norms {
		x := c.ops[i].(plan.Norm)
		form := uint32(1)
		if x.Row != att.HeadDim {
			form = 2
		}
		switch {
		case x.In == plan.V:
			if x.Weight != nil || form != 1 {
				return unsupportedOp("a V norm with a weight or over more than a head")
			}
			continue
		case x.Weight == nil || x.Weight.Cols != x.Row || (form == 2 && x.Row != x.Width) || x.Width%x.Row != 0:
			return unsupportedOp("a %v norm of rows of %d of %d without a weight of a row", x.In, x.Row, x.Width)
		case x.In == plan.K && pro.qkNorm == 2 && x.Row == x.Width:
			continue // one K head: its head is its width
		case pro.qkNorm != 0 && pro.qkNorm != form:
			return unsupportedOp("Q and K norms of different forms")
		}
		pro.qkNorm = form
	}
	if pro.vNorm && pro.qkNorm != 1 {
		return unsupportedOp("a V norm without per-head Q/K norms, which the rope kernel does not compute")
	}
	vnorm := 1
	if pro.vNorm {
		vnorm = 2
	}
	if pro.qkNorm == 1 && att.Heads+vnorm*att.KVHeads > 512 {
		return unsupportedOp("%d query and %d key heads, over the 512 the Q/K norm kernel holds", att.Heads, vnorm*att.KVHeads)
	}
	if att.Shared != shared {
		return unsupportedOp("an attention that reads %s cache after a product of %d outputs", map[bool]string{true: "another layer's", false: "its own"}[att.Shared], len(o.Outs))
	}
	l, name := c.sec, c.name
	c.add(func(b *Backend, w *walk) error { return b.recordQKV(w, l, ref, in, pro, name) })
	c.i-- // the attention is compiled as itself
	return nil
}

// recordQKV records layer l's Q(|K|V) product with what follows it up to
// the attention: one stacked product or three, the rotation and cache
// write (the product's epilogue, or a rope.comp dispatch), and a gated
// Q's gate rows.
func (b *Backend) recordQKV(w *walk, l int, ref opRef, in input, pro qkvPrologue, name func(string) string) error {
	pl := b.plans[l]
	bw := b.weights.at(ref)
	dum, err := b.d.dummy()
	if err != nil {
		return err
	}
	hd, kvh := pl.headDim, pl.kvHeads
	qw, kvw := b.plan.Heads*hd, kvh*hd
	kvf32 := uint32(0)
	if b.opts.KVType.Bytes() == 4 {
		kvf32 = 1
	}
	if b.kvq != nil {
		kvf32 = 2 // f32 staging rows, which kvquant.comp quantizes into the cache
	}
	tb := uint64(b.graph.ropeTableBytes(0))
	shared := pl.shared(l)
	kc, vc := b.cache.kc[l], b.cache.vc[l] // a KV-shared layer's are its source's
	norm := func(r *opRef) *vulkan.Buffer {
		if r == nil {
			return dum
		}
		return b.weights.at(*r).vec
	}
	ro := &ropeOp{label: name("rope"), spec: [7]uint32{uint32(hd), uint32(pl.dims), flag(pl.neox), kvf32, pro.qkNorm, flag(pro.vNorm)},
		table: vulkan.Arg{B: b.graph.step, Off: uint64(b.graph.ropeOff) + uint64(pl.table)*tb, Size: tb, Format: fmtU32x2},
		q:     b.act.q, kc: kc, vc: vc, qn: norm(pro.qNorm), kn: norm(pro.kNorm), arrive: b.act.ropeArrive,
		args: ropeArgs{heads: b.plan.Heads, kvHeads: kvh, qkvStride: b.act.qkvStride, qStride: b.act.qStride, slots: pl.slots, rope: pro.rope, qScale: pro.qScale, eps: pro.eps, temp: pro.temp}}
	if shared {
		ro.args.kvHeads = 0 // Q only; the caches are not written
	}
	if b.kvq != nil {
		ro.kc, ro.vc = b.kvq.ks, b.kvq.vs
	}
	if len(bw.mats) > 0 {
		// the Q/K norms sum as the model's other norms (rope.glsl QKEXACT)
		ro.spec[6] = flag(bw.mats[0].cpuOrder)
	}
	mv := matvecOp{y: b.act.qkv, ystride: b.act.qkvStride, tokens: w.s.cap, step: b.graph.step, xq: b.act.xq}
	b.bind(&mv, in)
	if bw.bias != nil {
		mv.bias, mv.epi = bw.bias, epiBias
	}
	if len(bw.mats) == 1 {
		// one product: Q|K|V stacked, or Q only where the keys and values
		// are in the source layer's cache; the rotation follows it, or
		// ends it
		mv.label, mv.m, mv.rope = name("qkv"), bw.mats[0], ro
		if shared {
			mv.label = name("q")
		}
		if err := b.d.matvec(w.r, mv); err != nil {
			return err
		}
	} else {
		for i, m := range bw.mats {
			op := mv
			op.label, op.m = name([]string{"q", "k", "v"}[i]), m
			op.yoff = []int{0, qw, qw + kvw}[i]
			op.bias = bw.biasAt(i)
			if err := b.d.matvec(w.r, op); err != nil {
				return err
			}
		}
		if err := b.d.rope(w.r, ro, b.act.qkv, b.graph.step, w.s.cap); err != nil {
			return err
		}
	}
	if b.kvq != nil && !shared {
		if err := b.kvq.write(b.d, w.r, name("kv quantize"), hd, kvh, pl.slots, kc, vc, b.graph.step, w.s.cap); err != nil {
			return err
		}
	}
	if bw.gate != nil {
		g := mv
		g.label, g.m, g.y, g.ystride, g.yoff, g.bias, g.epi, g.rope = name("q gate"), bw.gate, b.act.dn.gate, b.act.qStride, 0, nil, epiStore, nil
		return b.d.matvec(w.r, g)
	}
	return nil
}

func (c *compiler) attention(o plan.Attention) error {
	has := 0
	if o.Sinks != nil {
		has = 1
		if o.Sinks.Cols != o.Heads {
			return fmt.Errorf("tensor %q: %d sinks for %d heads", o.Sinks.Name, o.Sinks.Cols, o.Heads)
		}
	}
	if *c.sinks >= 0 && *c.sinks != has {
		// one attention pipeline serves every layer, with sinks or without
		return unsupportedOp("attention sinks on some layers only")
	}
	*c.sinks = has
	if c.sec < 0 {
		return unsupportedOp("an attention outside a layer")
	}
	l, ref, label := c.sec, c.ref(c.i), c.name("attention")
	scale := o.Scale
	if o.Softcap != 0 {
		// as ggml's flash attention: scale /= cap; s = cap·tanh(s·scale)
		scale /= o.Softcap
	}
	c.add(func(b *Backend, w *walk) error {
		pl := b.plans[l]
		// decode on a GPU: split-K over the live span, the last split merging
		ao := attnOp{label: label, q: b.act.q, kc: b.cache.kc[l], vc: b.cache.vc[l], out: b.act.att, step: b.graph.step, sinks: b.weights.at(ref).vec,
			part: b.act.attPart, arrive: b.act.attArrive, hd: o.HeadDim, heads: o.Heads, kvHeads: o.KVHeads, slots: pl.slots, window: o.Window,
			qstride: b.act.qStride, kvf32: b.opts.KVType.Bytes() == 4, scale: scale, cap: o.Softcap, capExact: b.weights.cpuOrder, tokens: w.s.cap}
		if b.kvq != nil {
			return b.kvq.attend(b.d, w.r, ao)
		}
		b.d.attnFor(&ao, w.s.cap == 1)
		return b.d.recordAttention(w.r, ao)
	})
	return nil
}

// moeForm refuses the gatings and forms of the op moe.go has no kernels
// for, naming them.
func moeForm(o plan.MoE) error {
	scored := o.Gating == plan.GatingSigmoid || o.Gating == plan.GatingSoftmax
	if o.Gating != plan.GatingSoftmaxTopKNorm && o.Gating != plan.GatingTopKSoftmax && !scored {
		return unsupportedOp("mixture-of-experts gating %s", o.Rule)
	}
	if len(o.Gate.Data) == 0 && o.Act != plan.ActReLU2 {
		return unsupportedOp("ungated experts with %v", o.Act)
	}
	for _, v := range []struct {
		on   bool
		what string
	}{
		{o.SelectBias != nil && !scored, "a selection bias outside sigmoid or softmax → top-k gating"},
		{o.RouterIn != nil && o.RouterIn.From != plan.X, "a router reading a norm of another buffer than the stream"},
		{o.FusedGateUp && !o.Act.Gated(), "a fused gate|up bank of an ungated activation"},
	} {
		if v.on {
			return unsupportedOp("experts with %s", v.what)
		}
	}
	return nil
}

// expertActivation is activation for experts, which may also be ungated
// (ReLU² of the up product alone: relu2 after it, no gate activation).
func expertActivation(a plan.Activation) (uint32, error) {
	if a == plan.ActReLU2 {
		return 0, nil
	}
	return activation(a)
}

// moe compiles routed experts, with a shared expert after them, and their
// residual add when it fuses.
func (c *compiler) moe(o plan.MoE) error {
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	if o.Out != plan.Out {
		return unsupportedOp("experts writing %v", o.Out)
	}
	if err := moeForm(o); err != nil {
		return err
	}
	act, err := expertActivation(o.Act)
	if err != nil {
		return err
	}
	ref := c.ref(c.i)
	var shared *opRef
	var sharedIn input
	var sharedAct uint32
	var sharedFn plan.Activation
	ungated := false // a shared expert added as it is, without a σ gate (granitehybrid)
	if sh, ok := c.next().(plan.SharedExpert); ok {
		c.take()
		r := c.ref(c.i)
		shared = &r
		if sharedIn, err = c.input(sh.In); err != nil {
			return err
		}
		if sh.Out != plan.Out {
			return unsupportedOp("a shared expert writing %v", sh.Out)
		}
		ungated = len(sh.Scale.Data) == 0
		if len(sh.Gate.Data) == 0 && sh.Act != plan.ActReLU2 {
			return unsupportedOp("an ungated shared expert with %v", sh.Act)
		}
		sharedFn = sh.Act
		if sharedAct, err = expertActivation(sh.Act); err != nil {
			return err
		}
	}
	// experts adding to Out leave the Residual after them to add it
	fused := false
	if o.Add {
		c.branch = "ffn out"
	} else {
		fused = c.fuseResidual("ffn out")
	}
	if shared != nil && o.Add {
		return unsupportedOp("a shared expert beside experts adding to another branch")
	}
	if shared != nil && !fused && !ungated {
		// the σ-gated shared expert adds to X after the routed experts'
		// residual; an ungated one adds to their sum, wherever it is
		return unsupportedOp("a σ-gated shared expert with a post-norm or residual scale")
	}
	l, name, label := c.sec, c.name, c.name(c.branch)
	c.add(func(b *Backend, w *walk) error {
		fused := fused
		// the CPU backend (and llama.cpp) adds the ungated shared expert
		// to the routed experts' sum, then that to x: a model rounding as
		// the CPU's sums in that order, in Out, and adds it after
		sumFirst := fused && shared != nil && ungated && b.weights.cpuOrder
		if sumFirst {
			fused = false
		}
		if shared != nil {
			// on the FFN's input, before the routed experts add to x
			sw := b.weights.at(*shared).shared
			if err := b.recordSharedProducts(w.r, name, sw, sharedIn, cpuAct(sharedFn, sharedAct, sw.gate), !ungated, w.s); err != nil {
				return err
			}
		}
		mw := b.weights.at(ref).moe
		if err := b.recordMoE(w.r, name, l, &o, mw, in, cpuAct(o.Act, act, mw.gate), fused, w.s); err != nil {
			return err
		}
		switch {
		case sumFirst:
			if err := b.recordSharedDown(w.r, name, b.weights.at(*shared).shared, false, w.s); err != nil {
				return err
			}
			return b.recordBranchEnd(w.r, label, nil, 0, 1, w.s)
		case shared != nil && ungated:
			return b.recordSharedDown(w.r, name, b.weights.at(*shared).shared, fused, w.s)
		case shared != nil:
			return b.recordSharedAdd(w.r, name, w.s)
		}
		return nil
	})
	return nil
}

func (c *compiler) deltaNet(o plan.DeltaNet) error {
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	if d := o.Shape; d.ConvKernel > 8 || d.StateSize > 256 {
		return unsupportedOp("a DeltaNet conv of %d taps and state of %d (the kernels hold 8 and 256)", d.ConvKernel, d.StateSize)
	}
	if o.Out != plan.Out {
		return unsupportedOp("a DeltaNet writing %v", o.Out)
	}
	l, ref, name := c.sec, c.ref(c.i), c.name
	fused := c.fuseResidual("dn out")
	c.add(func(b *Backend, w *walk) error {
		return b.recordDeltaNet(w.r, name, l, &o, b.weights.at(ref).dn, in, fused, w.s)
	})
	return nil
}

func (c *compiler) shortConv(o plan.ShortConv) error {
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	if o.Out != plan.Out {
		return unsupportedOp("a short convolution writing %v", o.Out)
	}
	l, ref, name := c.sec, c.ref(c.i), c.name
	fused := c.fuseResidual("short conv out")
	c.add(func(b *Backend, w *walk) error {
		return b.recordShortConv(w.r, name, l, &o, b.weights.at(ref).conv, in, fused, w.s)
	})
	return nil
}

func (c *compiler) mamba2(o plan.Mamba2) error {
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	if err := mamba2Limits(o.Shape); err != nil {
		return err
	}
	if o.Out != plan.Out {
		return unsupportedOp("a Mamba2 mixer writing %v", o.Out)
	}
	l, ref, name := c.sec, c.ref(c.i), c.name
	fused := c.fuseResidual("ssm out")
	c.add(func(b *Backend, w *walk) error {
		return b.recordMamba2(w.r, name, l, &o, b.weights.at(ref).mamba, in, fused, w.s)
	})
	return nil
}

func (c *compiler) mla(o plan.MLA) error {
	in, err := c.input(o.In)
	if err != nil {
		return err
	}
	if c.sec < 0 {
		return unsupportedOp("a latent attention outside a layer")
	}
	if row := o.Shape.CacheRow(); row%8 != 0 {
		return unsupportedOp("a latent attention row of %d values, not a multiple of 8 as the attention kernel needs", row)
	}
	l, ref, name := c.sec, c.ref(c.i), c.name
	c.add(func(b *Backend, w *walk) error {
		return b.recordMLA(w.r, name, l, &o, b.weights.at(ref).mla, in, w.s)
	})
	return nil
}

// residual adds Out to X through residual.comp: the post-norm and scale
// that no product's epilogue computes.
func (c *compiler) residual(o plan.Residual) error {
	if o.Branch != plan.Out {
		return unsupportedOp("a residual add of %v", o.Branch)
	}
	ref, label := c.ref(c.i), c.name(c.branch)
	c.wroteX()
	c.add(func(b *Backend, w *walk) error {
		return b.recordBranchEnd(w.r, label, b.weights.at(ref).vec, o.Eps, o.Scale, w.s)
	})
	return nil
}

func (c *compiler) perLayerEmbedding(o plan.PerLayerEmbedding) error {
	ref, name := c.ref(c.i), c.name
	c.wroteX()
	c.add(func(b *Backend, w *walk) error {
		return b.recordPLELayer(w.r, name, o.Layer, b.weights.at(ref).ple, o.Eps, w.s)
	})
	return nil
}

// logits compiles the head's logit scale and soft-cap (in that order, as
// llama.cpp's graph) as one logits.comp dispatch.
func (c *compiler) logits() error {
	scale, cp := float32(1), float32(0)
	if o, ok := c.ops[c.i].(plan.Scale); ok {
		if o.Buf != plan.Logits {
			return unsupportedOp("a scale of %v outside a Q|K|V prologue", o.Buf)
		}
		scale = o.By
		if _, ok := c.next().(plan.Softcap); ok {
			c.take()
		}
	}
	if o, ok := c.ops[c.i].(plan.Softcap); ok {
		if o.Buf != plan.Logits {
			return unsupportedOp("a soft-cap of %v", o.Buf)
		}
		cp = o.Cap
	}
	c.add(func(b *Backend, w *walk) error { return b.recordLogits(w.r, w.s, w.last, scale, cp) })
	return nil
}

// branchOut reports whether some branch ends in residual.comp, which adds
// Out (activations.o) to X: a Residual with a post-norm or scale, which no
// epilogue computes, or a per-layer embedding; or, where the model rounds
// as the CPU backend's (cpuOrder), an ungated shared expert (the MoE
// closure sums it with the routed experts in Out first).
func branchOut(p *plan.Plan, cpuOrder bool) bool {
	out := false
	forOps(p, func(_ int, op plan.Op) {
		switch o := op.(type) {
		case plan.SharedExpert:
			out = out || cpuOrder && len(o.Scale.Data) == 0
		case plan.Residual:
			out = out || o.PostNorm != nil || o.Scale != 1
		case plan.PerLayerEmbedding:
			out = true
		}
	})
	return out
}
