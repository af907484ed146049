package vk

import (
	"encoding/binary"
	"fmt"
	"math"

	"vkchat/runtime/plan"

	"vkchat/runtime/vk/vulkan"
)

// Multi-head latent attention (deepseek2; plan.MLA) in llama.cpp's absorbed
// form, as dispatches per layer:
//
//	matvec    x → qa, qa → q      RMSNorm(attn_norm) fused; q_a_norm fused into q_b
//	          (or x → q directly)
//	matvec    x → kva             [latent c | k_rope]
//	mla_copy  kva → qkv's K       c normed by kv_a_norm, after k_rope
//	mla_copy  q → qkv's Q         each head's q_rope, then every head's q_nope → a row per (token, head)
//	matvec    KB bank             q̃_h of every (token, head) pair: the expert mat-vec (MOE) with
//	                              the heads as experts, pair (t, h) choosing head h's rows
//	mla_copy  → qkv's Q           each q̃_h beside its head's q_rope
//	rope      qkv → q, cache      the rotation of the first Rope dims, the key cache write
//	attention                     one KV head of the whole row; the values the same cache
//	                              (attnq.comp's f16 path where the model rounds as the CPU
//	                              backend's, cpuAttention: its scores sum [latent | rope])
//	mla_copy  att → pairs         the latent part of each head's output, a row per (token, head)
//	matvec    VB bank             each pair's values, as KB's
//	mla_copy  → Attn              the heads' values side by side
//
// A prefill with quantized banks takes the grouped tiled product over the
// pairs (moe_group.comp once per layer), as a MoE layer's experts do.
//
// The rows on this backend are laid out [rope | latent] rather than the
// CPU's [latent | rope], which lets rope.comp rotate a head's first dims
// as it does for partial rotary heads; a score's float sum follows the
// CPU's order where it must give its bits (attnq.comp's ROFF). The value is the whole row (V is a
// view of K in llama.cpp; its RoPE part is computed and dropped, each
// dimension of the output being summed on its own), so the layer holds
// no value cache: rope.comp's value write goes to one buffer shared by
// the latent layers and read by none (cache.latentV).

// mlaWeights are one MLA layer's weights on the device.
type mlaWeights struct {
	qa, q, kva     *Matrix
	qaNorm, kvNorm *vulkan.Buffer
	kb, vb         *Matrix // banks of a run of rows per head
}

// mlaBuffers are the MLA activations; nil without MLA layers. The heads'
// products read and write a row per (token, head) pair, pair t·heads+h.
type mlaBuffers struct {
	qa, q, kva *vulkan.Buffer
	hin, hout  *vulkan.Buffer // the pairs' inputs (hStride apart) and outputs (oStride apart)
	// ids holds h for pair t·heads+h (constant); groups and xq are the
	// grouped product's pair list and rounded inputs
	ids, groups, xq                                *vulkan.Buffer
	heads                                          int
	qaStride, qStride, kvaStride, hStride, oStride int
}

// headBank checks that a per-head bank is whole heads of rows each.
func headBank(w plan.Weight, heads, rows int) error {
	if w.Rows != heads*rows || len(w.Data)%w.Rows != 0 {
		return fmt.Errorf("tensor %q: %d rows are not %d heads of %d", w.Name, w.Rows, heads, rows)
	}
	return nil
}

// uploadMLA puts an MLA layer's weights on the device.
func (ws *weights) uploadMLA(d *gpu, up func(plan.Weight) *Matrix, o plan.MLA) (*mlaWeights, error) {
	m, x := o.Shape, o.W
	w := &mlaWeights{q: up(x.Q), kva: up(x.KVA)}
	var err error
	if x.QA != nil {
		w.qa = up(*x.QA)
		if w.qaNorm, err = ws.vector(d, *x.QANorm, int(alignUp(uint64(m.QLora), 256))); err != nil {
			return nil, err
		}
	}
	if w.kvNorm, err = ws.vector(d, x.KVANorm, m.KVLora); err != nil {
		return nil, err
	}
	if err := headBank(x.KB, o.Heads, m.KVLora); err != nil {
		return nil, err
	}
	if err := headBank(x.VB, o.Heads, m.V); err != nil {
		return nil, err
	}
	w.kb, w.vb = up(x.KB), up(x.VB)
	return w, nil
}

// allocateMLA makes the MLA activations for the widest MLA layer.
func (b *Backend) allocateMLA(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	var m *mlaBuffers
	heads := 0
	for _, l := range b.plan.Layers {
		for _, op := range l.Ops {
			o, ok := op.(plan.MLA)
			if !ok {
				continue
			}
			if m == nil {
				m = &mlaBuffers{}
			}
			s := o.Shape
			m.qaStride = max(m.qaStride, int(alignUp(uint64(s.QLora), 256)))
			m.qStride = max(m.qStride, int(alignUp(uint64(o.Heads*(s.Nope+s.Rope)), 4)))
			m.kvaStride = max(m.kvaStride, int(alignUp(uint64(s.CacheRow()), 4)))
			m.hStride = max(m.hStride, int(alignUp(uint64(max(s.Nope, s.KVLora)), 256)))
			m.oStride = max(m.oStride, int(alignUp(uint64(max(s.KVLora, s.V)), 4)))
			heads = max(heads, o.Heads)
		}
	}
	if m == nil {
		return nil
	}
	b.act.mla = m
	n := prefillChunk
	var err error
	if m.qaStride > 0 {
		if m.qa, err = act("activations MLA q_a", n*m.qaStride, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if m.q, err = act("activations MLA q", n*m.qStride, vulkan.MemDevice); err != nil {
		return err
	}
	if m.kva, err = act("activations MLA kv_a", n*m.kvaStride, vulkan.MemDevice); err != nil {
		return err
	}
	m.heads = heads
	pairs := n * heads
	for _, a := range []struct {
		dst    **vulkan.Buffer
		name   string
		floats int
	}{
		{&m.hin, "activations MLA heads' inputs", pairs * m.hStride},
		{&m.hout, "activations MLA heads' outputs", pairs * m.oStride},
		{&m.ids, "MLA head of each (token, head) pair", pairs},
		{&m.groups, "MLA pairs grouped by head", 2*heads + pairs},
		{&m.xq, "activations MLA heads' inputs rounded for the grouped product", pairs * xqBound(m.hStride)},
	} {
		if *a.dst, err = act(a.name, a.floats, vulkan.MemDevice); err != nil {
			return err
		}
	}
	ids := make([]byte, 4*pairs)
	for p := range pairs {
		binary.LittleEndian.PutUint32(ids[4*p:], uint32(p%heads))
	}
	if err := m.ids.Write(0, ids); err != nil {
		return err
	}
	bufs := []*vulkan.Buffer{m.q, m.kva, m.hin, m.hout}
	if m.qa != nil {
		bufs = append(bufs, m.qa)
	}
	return b.d.Zero(bufs...)
}

// mlaCopy is one mla_copy dispatch: blocks blocks of n values per token.
type mlaCopy struct {
	src, dst              *vulkan.Buffer
	n, blocks             int
	sstride, soff, sblock int
	dstride, doff, dblock int
	norm                  *vulkan.Buffer // nil: a plain copy
	eps                   float32
}

func (b *Backend) recordMLACopy(r *vulkan.Recorder, label string, c mlaCopy, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("mla_copy", 9*4, wg)
	if err != nil {
		return err
	}
	norm, wt := uint32(0), c.norm
	if wt == nil {
		if wt, err = b.d.dummy(); err != nil {
			return err
		}
	} else {
		norm = 1
	}
	return r.Dispatch(label, k, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(c.src), vulkan.R(wt), vulkan.W(c.dst)},
		[]uint32{uint32(c.n), uint32(c.sstride), uint32(c.soff), uint32(c.sblock), uint32(c.dstride), uint32(c.doff), uint32(c.dblock), norm, math.Float32bits(c.eps)},
		uint32(c.blocks), uint32(s.cap), 1)
}

// recordMLA records layer l's latent attention for the step's tokens,
// writing each head's values into Attn.
func (b *Backend) recordMLA(r *vulkan.Recorder, name func(string) string, l int, o *plan.MLA, w *mlaWeights, in input, s bodyShape) error {
	m, sh, H := b.act.mla, o.Shape, o.Heads
	rl, dr, dn, dv := sh.KVLora, sh.Rope, sh.Nope, sh.V
	row, qh := sh.CacheRow(), sh.Nope+sh.Rope
	pl := b.plans[l]
	mv := func(label string, mat *Matrix, x *vulkan.Buffer, xstride int, y *vulkan.Buffer, ystride, yoff int) matvecOp {
		return matvecOp{label: name(label), m: mat, x: x, xstride: xstride, y: y, ystride: ystride, yoff: yoff, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
	}
	// the query
	if w.qa != nil {
		qa := mv("q_a", w.qa, nil, 0, m.qa, m.qaStride, 0)
		b.bind(&qa, in)
		if err := b.d.matvec(r, qa); err != nil {
			return err
		}
		q := mv("q_b", w.q, m.qa, m.qaStride, m.q, m.qStride, 0)
		q.norm, q.eps = w.qaNorm, o.Eps
		if err := b.d.matvec(r, q); err != nil {
			return err
		}
	} else {
		q := mv("q", w.q, nil, 0, m.q, m.qStride, 0)
		b.bind(&q, in)
		if err := b.d.matvec(r, q); err != nil {
			return err
		}
	}
	kva := mv("kv_a", w.kva, nil, 0, m.kva, m.kvaStride, 0)
	b.bind(&kva, in)
	if err := b.d.matvec(r, kva); err != nil {
		return err
	}
	// the Q|K|V rows rope.comp reads: Q [H][rope | latent], K [rope |
	// latent]; the V rows it writes are unread (the attention's values
	// are the cached keys), so they are left as they are
	qkv, qs := b.act.qkv, b.act.qkvStride
	kOff := H * row
	for _, c := range []struct {
		label string
		c     mlaCopy
	}{
		{"k latent", mlaCopy{src: m.kva, dst: qkv, n: rl, blocks: 1, sstride: m.kvaStride, dstride: qs, doff: kOff + dr, norm: w.kvNorm, eps: o.Eps}},
		{"k rope", mlaCopy{src: m.kva, dst: qkv, n: dr, blocks: 1, sstride: m.kvaStride, soff: rl, dstride: qs, doff: kOff}},
		{"q rope", mlaCopy{src: m.q, dst: qkv, n: dr, blocks: H, sstride: m.qStride, soff: dn, sblock: qh, dstride: qs, dblock: row}},
	} {
		if err := b.recordMLACopy(r, name(c.label), c.c, s); err != nil {
			return err
		}
	}
	// the heads' products: an expert product over the (token, head)
	// pairs, pair t·H+h reading head h's rows of the bank
	rows := moeRows{ids: m.ids, k: H, experts: H, perPair: true}
	heads := func(label string, bank *Matrix) matvecOp {
		return matvecOp{label: name(label), m: bank, x: m.hin, xstride: m.hStride, y: m.hout, ystride: m.oStride, tokens: s.cap, step: b.graph.step, moe: rows, xq: m.xq}
	}
	kbOp, vbOp := heads("k_b", w.kb), heads("v_b", w.vb)
	var groups *vulkan.Buffer
	if b.d.useGrouped(&kbOp) || b.d.useGrouped(&vbOp) {
		if err := b.d.moeGroup(r, name("heads group"), H, H, m.ids, m.groups, b.graph.step, s.cap); err != nil {
			return err
		}
		groups = m.groups
	}
	// the absorbed query per head: KB_h·q_nope_h beside its q_rope
	for _, c := range []struct {
		label string
		c     mlaCopy
		op    *matvecOp
	}{
		{"q nope", mlaCopy{src: m.q, dst: m.hin, n: dn, blocks: H, sstride: m.qStride, sblock: qh, dstride: H * m.hStride, dblock: m.hStride}, &kbOp},
		{"q absorbed", mlaCopy{src: m.hout, dst: qkv, n: rl, blocks: H, sstride: H * m.oStride, sblock: m.oStride, dstride: qs, doff: dr, dblock: row}, nil},
	} {
		if err := b.recordMLACopy(r, name(c.label), c.c, s); err != nil {
			return err
		}
		if c.op != nil {
			if err := b.d.expertProduct(r, *c.op, groups); err != nil {
				return err
			}
		}
	}
	kvf32 := uint32(0)
	if b.opts.KVType.Bytes() == 4 {
		kvf32 = 1
	}
	dum, err := b.d.dummy()
	if err != nil {
		return err
	}
	tb := uint64(b.graph.ropeTableBytes(0))
	ro := &ropeOp{label: name("rope"), spec: [7]uint32{uint32(row), uint32(dr), flag(pl.neox), kvf32, 0, 0},
		table: vulkan.Arg{B: b.graph.step, Off: uint64(b.graph.ropeOff) + uint64(pl.table)*tb, Size: tb, Format: fmtU32x2},
		q:     b.act.q, kc: b.cache.kc[l], vc: b.cache.latentV, qn: dum, kn: dum,
		args: ropeArgs{heads: H, kvHeads: 1, qkvStride: qs, qStride: b.act.qStride, slots: pl.slots, rope: true, qScale: 1, eps: o.Eps}}
	if err := b.d.rope(r, ro, qkv, b.graph.step, s.cap); err != nil {
		return err
	}
	ao := attnOp{label: name("attention"), q: b.act.q, kc: b.cache.kc[l], vc: b.cache.kc[l], out: b.act.att, step: b.graph.step,
		part: b.act.attPart, arrive: b.act.attArrive, hd: row, heads: H, kvHeads: 1, slots: pl.slots,
		qstride: b.act.qStride, kvf32: kvf32 == 1, scale: o.Scale, tokens: s.cap, roff: dr}
	if b.kvq != nil {
		// the CPU backend's F16 flash attention (cpuAttention): its score
		// sums [latent | rope], the order read from this backend's rows
		if err := b.kvq.attend(b.d, r, ao); err != nil {
			return err
		}
	} else {
		b.d.attnFor(&ao, s.cap == 1)
		if err := b.d.recordAttention(r, ao); err != nil {
			return err
		}
	}
	// each head's latent output, decompressed by VB_h into Attn
	c := mlaCopy{src: b.act.att, dst: m.hin, n: rl, blocks: H, sstride: b.act.qStride, soff: dr, sblock: row, dstride: H * m.hStride, dblock: m.hStride}
	if err := b.recordMLACopy(r, name("latent"), c, s); err != nil {
		return err
	}
	if err := b.d.expertProduct(r, vbOp, groups); err != nil {
		return err
	}
	c = mlaCopy{src: m.hout, dst: b.act.att, n: dv, blocks: H, sstride: H * m.oStride, sblock: m.oStride, dstride: b.act.qStride, dblock: dv}
	return b.recordMLACopy(r, name("values"), c, s)
}
