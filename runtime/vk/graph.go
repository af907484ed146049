package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/arch"

	"vkchat/runtime/vk/vulkan"
)

// The forward pass as dispatches. Per layer (6 dispatches when Q/K/V and
// gate/up share types, 8 with post-norms or a residual scale):
//
//	matvec   x → qkv      RMSNorm(attn_norm) fused (pre-norm recipes), Q|K|V stacked (+bias)
//	rope     qkv → q, K/V cache at pos..pos+n-1 (Q/K norm, RoPE unless NoPE, Q scale);
//	         on the GPU layout a decode step does it in the QKV product's last workgroup
//	attn     q, cache → att (scale, soft-cap, sliding window, sinks)
//	matvec   att → x      Wo (+bias) with the residual add as epilogue, or
//	matvec   att → o      and residual o → x: post-norm and/or residual scale, then the add
//	matvec   x → h        RMSNorm(ffn_norm), gate and up paired: act(g)·u (SiLU or GELU-tanh)
//	matvec   h → x        down with the residual add (or → o, residual o → x)
//
// or, for a mixture-of-experts FFN, router, route, expert mat-vecs and
// their weighted sum (moe.go).
//
// then the head: RMSNorm(output_norm) and the output projection → logits,
// and, where the model has them, its logit scale and final soft-cap.

// graph is the forward pass as the device runs it: the command buffers a
// step submits, recorded once (decode at load, the prefill body and the
// heads at first use), and the step buffer they all read, which the host
// fills before each submission (the token ids, position, rope tables and
// the PLE rows).
type graph struct {
	decode, prefill, headLast, headAll *vulkan.Recorder
	nextHead                           *vulkan.Recorder // the head kernel over the last token's logits
	seq                                uint64           // forward passes run, for LastLogits

	step       *vulkan.Buffer // per-step parameters; device-local under the GPU layout
	stepHost   *vulkan.Buffer // host-visible source of step's copy when step is device-local, else nil
	ropeTables []ropeTable    // one per distinct RoPE base and scale
	ropeOff    int            // byte offset of the rope tables in step
	pleOff     int            // byte offset of the PLE table rows in step (ple.go)
}

// allocateStep makes the step buffer (and its host copy where it is
// device-local) through act: the step's count, position and token ids,
// then the rope tables (of at least ropeDims) and pleBytes of PLE rows.
func (g *graph) allocateStep(d *gpu, act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error), ropeDims, pleBytes int) error {
	g.ropeOff = int(alignUp(uint64(16+4*prefillChunk), regionAlign))
	stepBytes := g.ropeOff + len(g.ropeTables)*g.ropeTableBytes(ropeDims)
	if pleBytes > 0 {
		g.pleOff = stepBytes // aligned: the tables' size is
		stepBytes += pleBytes
	}
	stepWords := stepBytes/4 + 4
	var err error
	if g.step, err = act("step parameters", stepWords, d.tune.stepKind()); err != nil {
		return err
	}
	if g.step.Kind != vulkan.MemHost {
		if g.stepHost, err = act("step parameters (host copy)", stepWords, vulkan.MemHost); err != nil {
			return err
		}
	}
	return nil
}

// ropeAngles fills the step buffer's tables (one per distinct base and
// scale) for tokens at positions pos..pos+n-1 the way the reference backend
// computes them: theta starts at the position and is multiplied by
// base^(-2/dims) per pair in float32, then divided by the frequency factor
// and scaled, and cos/sin are taken in float64. With YaRN (gpt-oss) the
// scaled and unscaled angles are blended by the pair's ramp and cos/sin
// raised by its MScale, as the CPU backend's ropeTable.angles does. r is
// the model's RoPE, context the positions the backend holds.
func (g *graph) ropeAngles(r *arch.Rope, context, pos, n int) {
	modelFactors := r.Factors(context)
	mscale := one(r.AttnFactor)
	if r.YaRN != nil {
		mscale *= r.YaRN.MScale
	}
	m := g.stepMapped()
	for ti, tab := range g.ropeTables {
		pairs := tab.dims / 2
		factors := modelFactors
		if !tab.factors {
			factors = nil
		}
		// powf(base, -2.0f/n_dims) as ggml computes it, the exponent in float32
		step := float32(math.Pow(float64(tab.base), float64(float32(-2)/float32(tab.dims))))
		off := g.ropeOff + ti*g.ropeTableBytes(r.Dims)
		for t := 0; t < n; t++ {
			theta := float32(pos + t)
			for i := 0; i < pairs; i++ {
				th := theta
				if factors != nil {
					th /= factors[i]
				}
				if y := r.YaRN; y != nil {
					ramp := y.Ramp(i)
					th = float32(th*tab.scale)*(1-ramp) + th*ramp
				} else {
					th *= tab.scale
				}
				c, s := float32(math.Cos(float64(th))), float32(math.Sin(float64(th)))
				if mscale != 1 {
					c, s = c*mscale, s*mscale
				}
				o := off + 8*(t*pairs+i)
				putF32(m, o, c)
				putF32(m, o+4, s)
				theta *= step
			}
		}
	}
}

// stepMapped is the host's view of the step parameters: their host copy
// where the step buffer is device-local.
func (g *graph) stepMapped() []byte {
	if g.stepHost != nil {
		return g.stepHost.Mapped()
	}
	return g.step.Mapped()
}

// ropeTableBytes is the room one table takes in the step buffer, aligned
// so each can be bound at its own offset: the widest table's, and at least
// the model's rotated dims.
func (g *graph) ropeTableBytes(dims int) int {
	for _, t := range g.ropeTables {
		dims = max(dims, t.dims)
	}
	return int(alignUp(uint64(8*prefillChunk*(dims/2)), regionAlign))
}

// bodyShape is what differs between the decode and prefill recordings: the
// tokens dispatched (kernels skip those past the step's count).
type bodyShape struct {
	cap int
}

// record builds the decode command buffer (one token in, its logits out).
// The prefill body and the two heads are recorded on first use: a session
// that only decodes never pays for their pipelines.
func (b *Backend) record() error {
	var err error
	b.graph.decode, err = b.recordWith(func(r *vulkan.Recorder) error {
		one := bodyShape{cap: 1}
		if err := b.recordBody(r, one); err != nil {
			return err
		}
		return b.recordHead(r, one, true)
	})
	return err
}

func (b *Backend) recordWith(f func(*vulkan.Recorder) error) (*vulkan.Recorder, error) {
	r, err := b.d.NewRecorder(b.prof.queries(len(b.weights.layers)))
	if err != nil {
		return nil, err
	}
	if err := r.Begin(); err != nil {
		return nil, err
	}
	if err := f(r); err != nil {
		return nil, err
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return r, nil
}

// recorders returns the command buffers a step of n tokens runs, recording
// the prefill ones the first time they are needed.
func (b *Backend) recorders(n int, all, last bool) ([]*vulkan.Recorder, error) {
	if n == 1 && !all && last {
		return []*vulkan.Recorder{b.graph.decode}, nil
	}
	var err error
	many := bodyShape{cap: prefillChunk}
	if b.graph.prefill == nil {
		if b.graph.prefill, err = b.recordWith(func(r *vulkan.Recorder) error { return b.recordBody(r, many) }); err != nil {
			return nil, err
		}
	}
	switch {
	case all:
		if b.graph.headAll == nil {
			if b.graph.headAll, err = b.recordWith(func(r *vulkan.Recorder) error { return b.recordHead(r, many, false) }); err != nil {
				return nil, err
			}
		}
		return []*vulkan.Recorder{b.graph.prefill, b.graph.headAll}, nil
	case last:
		if b.graph.headLast == nil {
			if b.graph.headLast, err = b.recordWith(func(r *vulkan.Recorder) error { return b.recordHead(r, bodyShape{cap: 1}, true) }); err != nil {
				return nil, err
			}
		}
		return []*vulkan.Recorder{b.graph.prefill, b.graph.headLast}, nil
	}
	return []*vulkan.Recorder{b.graph.prefill}, nil
}

func (b *Backend) recordHead(r *vulkan.Recorder, s bodyShape, last bool) error {
	err := b.d.matvec(r, matvecOp{
		label: "output", m: b.weights.output, x: b.act.x, xstride: b.act.xStride, norm: b.weights.outNorm, eps: b.cfg.NormEps,
		y: b.act.logits, ystride: b.cfg.Vocab, tokens: s.cap, last: last, step: b.graph.step, xq: b.act.xq,
	})
	if err != nil || (b.rec.logitScale == 1 && b.rec.finalCap == 0) {
		return err
	}
	return b.recordLogits(r, s, last)
}

// recordLogits applies the logit scale and the final soft-cap in place.
func (b *Backend) recordLogits(r *vulkan.Recorder, s bodyShape, last bool) error {
	const wg = 64
	cp := b.rec.finalCap
	k, err := b.d.kernel("logits", 5*4, wg, flag(cp != 0))
	if err != nil {
		return err
	}
	inv := float32(0)
	if cp != 0 {
		inv = 1 / cp
	}
	tokens := uint32(s.cap)
	if last {
		tokens = 1
	}
	v := b.cfg.Vocab
	return r.Dispatch("logit scale and cap", k, []vulkan.Arg{{B: b.act.logits, Format: fmtU32}, vulkan.W(b.act.logits), vulkan.R(b.graph.step)},
		[]uint32{uint32(v), flag(last), math.Float32bits(b.rec.logitScale), math.Float32bits(cp), math.Float32bits(inv)},
		uint32((v+wg-1)/wg), tokens, 1)
}

func flag(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// recordBranchEnd adds a branch's output o to x through its post-norm (nil:
// none) and the residual scale.
func (b *Backend) recordBranchEnd(r *vulkan.Recorder, label string, norm *vulkan.Buffer, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("residual", 4*4, wg, flag(norm != nil))
	if err != nil {
		return err
	}
	nw := norm
	if nw == nil {
		if nw, err = b.d.dummy(); err != nil {
			return err
		}
	}
	return r.Dispatch(label, k, []vulkan.Arg{{B: b.act.o, Format: fmtU32}, {B: nw, Format: fmtU32}, {B: b.act.x, Write: true}, vulkan.R(b.graph.step), {B: b.act.x, Format: fmtU32}},
		[]uint32{uint32(b.cfg.Embd), uint32(b.act.xStride), math.Float32bits(b.cfg.NormEps), math.Float32bits(b.rec.residualScale)},
		uint32(s.cap), 1, 1)
}

func (b *Backend) recordBody(r *vulkan.Recorder, s bodyShape) error {
	if b.graph.stepHost != nil {
		r.Upload(b.graph.stepHost, b.graph.step) // the step's parameters, once, then read on the device
	}
	c := &b.cfg
	d := b.d
	if err := b.recordEmbed(r, s); err != nil {
		return err
	}
	if b.weights.ple != nil {
		if err := b.recordPLEInputs(r, s); err != nil {
			return err
		}
	}
	kvf32 := uint32(0)
	if b.opts.KVType.Bytes() == 4 {
		kvf32 = 1
	}
	dum, err := d.dummy()
	if err != nil {
		return err
	}
	tb := uint64(b.graph.ropeTableBytes(c.Rope.Dims))
	for l, lw := range b.weights.layers {
		name := func(s string) string { return fmt.Sprintf("L%d %s", l, s) }
		pl := b.plans[l]
		if lw.conv != nil {
			if err := b.recordShortConv(r, name, l, lw, s); err != nil {
				return err
			}
			if err := b.recordFFN(r, name, l, lw, s); err != nil {
				return err
			}
			continue
		}
		if lw.dn != nil {
			if err := b.recordDeltaNet(r, name, l, lw, s); err != nil {
				return err
			}
			if err := b.recordFFN(r, name, l, lw, s); err != nil {
				return err
			}
			continue
		}
		// the layer's geometry picks its kernels (layers may differ: gemma4)
		hd, kvh := pl.headDim, pl.kvHeads
		qw, kvw := c.Heads*hd, kvh*hd
		dims := pl.dims
		if t := pl.table; pl.rope && t < len(b.graph.ropeTables) {
			dims = b.graph.ropeTables[t].dims
		}
		shared := pl.shared(l)
		kc, vc := b.cache.kc[l], b.cache.vc[l] // a KV-shared layer's are its source's
		ro := &ropeOp{label: name("rope"), spec: [6]uint32{uint32(hd), uint32(dims), flag(c.Rope.NeoX), kvf32, b.rec.qkNorm, flag(c.Block.VNorm)},
			table: vulkan.Arg{B: b.graph.step, Off: uint64(b.graph.ropeOff) + uint64(pl.table)*tb, Size: tb, Format: fmtU32x2},
			q:     b.act.q, kc: kc, vc: vc, qn: orDummy(lw.qNorm, dum), kn: orDummy(lw.kNorm, dum), arrive: b.act.ropeArrive,
			args: ropeArgs{heads: c.Heads, kvHeads: kvh, qkvStride: b.act.qkvStride, qStride: b.act.qStride, slots: pl.slots, rope: pl.rope, qScale: b.rec.qScale, eps: c.NormEps}}
		if shared {
			ro.args.kvHeads = 0 // Q only; the caches are not written
		}
		mv := matvecOp{x: b.act.x, xstride: b.act.xStride, norm: lw.attnNorm, eps: c.NormEps, y: b.act.qkv, ystride: b.act.qkvStride, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
		if lw.bias != nil {
			mv.bias, mv.epi = lw.bias, epiBias
		}
		if shared || lw.qkv != nil {
			// Q only where the keys and values are in the source layer's
			// cache; the rotation follows the one product, or ends it
			mv.label, mv.m, mv.rope = name("qkv"), lw.qkv, ro
			if shared {
				mv.label, mv.m = name("q"), lw.q
			}
			if err := b.d.matvec(r, mv); err != nil {
				return err
			}
		} else {
			for i, m := range []*Matrix{lw.q, lw.k, lw.v} {
				op := mv
				op.label, op.m = name([]string{"q", "k", "v"}[i]), m
				op.yoff = []int{0, qw, qw + kvw}[i]
				if lw.biases != nil {
					op.bias = lw.biases[i]
				}
				if err := b.d.matvec(r, op); err != nil {
					return err
				}
			}
			if err := d.rope(r, ro, b.act.qkv, b.graph.step, s.cap); err != nil {
				return err
			}
		}
		if lw.qGate != nil {
			g := mv
			g.label, g.m, g.y, g.ystride, g.yoff, g.bias, g.epi, g.rope = name("q gate"), lw.qGate, b.act.dn.gate, b.act.qStride, 0, nil, epiStore, nil
			if err := b.d.matvec(r, g); err != nil {
				return err
			}
		}
		// decode on a GPU: split-K over the live span, the last split merging
		ao := attnOp{label: name("attention"), q: b.act.q, kc: kc, vc: vc, out: b.act.att, step: b.graph.step, sinks: lw.sinks, part: b.act.attPart, arrive: b.act.attArrive,
			hd: hd, heads: c.Heads, kvHeads: kvh, slots: pl.slots, window: pl.window, qstride: b.act.qStride, kvf32: kvf32 != 0,
			scale: b.rec.scoreScale, cap: b.rec.attnCap, tokens: s.cap}
		d.attnFor(&ao, s.cap == 1)
		if err := d.recordAttention(r, ao); err != nil {
			return err
		}
		if lw.qGate != nil {
			if err := b.recordAttnGate(r, name, s); err != nil {
				return err
			}
		}
		// Wo's bias (gpt-oss) is added to the product before the residual (BIAS)
		wo := matvecOp{label: name("wo"), m: lw.wo, x: b.act.att, xstride: b.act.qStride, rbias: lw.bo, y: b.act.x, ystride: b.act.xStride, epi: epiResidual, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
		if b.rec.postBranch {
			wo.y, wo.epi = b.act.o, epiStore
		}
		if err := b.d.matvec(r, wo); err != nil {
			return err
		}
		if b.rec.postBranch {
			if err := b.recordBranchEnd(r, name("attention out"), lw.postAttn, s); err != nil {
				return err
			}
		}
		if err := b.recordFFN(r, name, l, lw, s); err != nil {
			return err
		}
		if err := b.recordLayerEnd(r, name, l, lw, s); err != nil {
			return err
		}
	}
	return nil
}

// recordFFN records a layer's FFN branch: dense, or routed experts (and a
// shared expert beside them).
func (b *Backend) recordFFN(r *vulkan.Recorder, name func(string) string, l int, lw *layerWeights, s bodyShape) error {
	c := &b.cfg
	if lw.moe != nil {
		if lw.shared != nil {
			// on the FFN's input, before the routed experts add to x
			if err := b.recordSharedProducts(r, name, lw, s); err != nil {
				return err
			}
		}
		if err := b.recordMoE(r, name, l, lw, s); err != nil {
			return err
		}
		if lw.shared != nil {
			return b.recordSharedAdd(r, name, s)
		}
		return nil
	}
	ffn := matvecOp{label: name("gate+up"), m: lw.gate, m2: lw.up, x: b.act.x, xstride: b.act.xStride, norm: lw.ffnNorm, eps: c.NormEps, y: b.act.h, y2: b.act.h2, ystride: b.act.ffStride, tokens: s.cap, step: b.graph.step, act: b.rec.act, xq: b.act.xq}
	if lw.gate.Type == lw.up.Type {
		if err := b.d.matvec(r, ffn); err != nil {
			return err
		}
	} else {
		gate := ffn
		gate.label, gate.m2 = name("gate"), nil
		if err := b.d.matvec(r, gate); err != nil {
			return err
		}
		upOp := ffn
		upOp.label, upOp.m, upOp.m2, upOp.epi = name("up·act(gate)"), lw.up, nil, epiSwiGLU
		if err := b.d.matvec(r, upOp); err != nil {
			return err
		}
	}
	down := matvecOp{label: name("down"), m: lw.down, x: b.act.h, xstride: b.act.ffStride, y: b.act.x, ystride: b.act.xStride, epi: epiResidual, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
	if b.rec.postBranch {
		down.y, down.epi = b.act.o, epiStore
	}
	if err := b.d.matvec(r, down); err != nil {
		return err
	}
	if b.rec.postBranch {
		if err := b.recordBranchEnd(r, name("ffn out"), lw.postFFN, s); err != nil {
			return err
		}
	}
	return nil
}

func (b *Backend) recordEmbed(r *vulkan.Recorder, s bodyShape) error {
	m := b.weights.tokEmbd
	k, err := b.d.kernel("embed_"+wtypeName(m), 6*4, 32)
	if err != nil {
		return err
	}
	dum, err := b.d.dummy()
	if err != nil {
		return err
	}
	for pi, part := range m.parts {
		args := make([]vulkan.Arg, 0, 6)
		for i := 0; i < 4; i++ {
			if i < len(part.views) {
				args = append(args, part.views[i])
			} else {
				args = append(args, vulkan.Arg{B: dum})
			}
		}
		args = append(args, vulkan.W(b.act.x), vulkan.R(b.graph.step))
		push := []uint32{uint32(m.Units), uint32(m.Cols), uint32(b.act.xStride), uint32(part.row0), uint32(part.rows), math.Float32bits(one(b.rec.embedScale))}
		if err := r.Dispatch(fmt.Sprintf("embed part %d", pi), k, args, push, uint32(s.cap), 1, 1); err != nil {
			return err
		}
	}
	return nil
}

// maxAttnSplits is the most split-K workgroups per KV head any layer's
// decode attention takes (0: the tuning has no split-K), which sizes the
// partials buffer.
func (b *Backend) maxAttnSplits() int {
	n := 0
	for _, pl := range b.plans {
		if !pl.recurrent {
			n = max(n, b.d.tune.attnSplits(pl.kvHeads, pl.slots, b.d.computeUnits()))
		}
	}
	return n
}
