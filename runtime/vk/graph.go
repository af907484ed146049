package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/vk/vulkan"
)

// The forward pass as dispatches, as exec.go records a plan's ops. Per
// attention layer (6 dispatches when Q/K/V and gate/up share types, 8 with
// post-norms or a residual scale):
//
//	matvec   x → qkv      the branch norm fused (where the plan has one), Q|K|V stacked (+bias)
//	rope     qkv → q, K/V cache at pos..pos+n-1 (Q/K norm, RoPE unless NoPE, Q scale);
//	         on the GPU layout a decode step does it in the QKV product's last workgroup
//	attn     q, cache → att (scale, soft-cap, sliding window, sinks)
//	matvec   att → x      Wo (+bias) with the residual add as epilogue, or
//	matvec   att → o      and residual o → x: post-norm and/or residual scale, then the add
//	matvec   x → h        the FFN norm fused, gate and up paired: act(g)·u (the GLU's activation)
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
// then the rope tables and pleBytes of PLE rows.
func (g *graph) allocateStep(d *gpu, act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error), pleBytes int) error {
	g.ropeOff = int(alignUp(uint64(16+4*prefillChunk), regionAlign))
	stepBytes := g.ropeOff + len(g.ropeTables)*g.ropeTableBytes(0)
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

// ropeAngles fills the step buffer's tables (one per plan rotation) for
// tokens at positions pos..pos+n-1 the way the reference backend computes
// them: theta starts at the position and is multiplied by base^(-2/dims)
// per pair in float32, then divided by the frequency factor and scaled, and
// cos/sin are taken in float64. With YaRN (gpt-oss) the scaled and
// unscaled angles are blended by the pair's ramp and cos/sin raised by its
// MScale, as the CPU backend's ropeTable.angles does.
func (g *graph) ropeAngles(pos, n int) {
	m := g.stepMapped()
	for ti, tab := range g.ropeTables {
		pairs := tab.dims / 2
		factors, mscale := tab.factors, tab.mscale
		// powf(base, -2.0f/n_dims) as ggml computes it, the exponent in float32
		step := float32(math.Pow(float64(tab.base), float64(float32(-2)/float32(tab.dims))))
		off := g.ropeOff + ti*g.ropeTableBytes(0)
		for t := 0; t < n; t++ {
			theta := float32(pos + t)
			for i := 0; i < pairs; i++ {
				th := theta
				if factors != nil {
					th /= factors[i]
				}
				if y := tab.yarn; y != nil {
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
		if err := b.recordBody(r, one, nil); err != nil {
			return err
		}
		return b.recordHead(r, one, true)
	})
	return err
}

func (b *Backend) recordWith(f func(*vulkan.Recorder) error) (*vulkan.Recorder, error) {
	r, err := b.d.NewRecorder(b.prof.queries(len(b.plan.Layers)))
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
		if b.graph.prefill, err = b.recordWith(func(r *vulkan.Recorder) error { return b.recordBody(r, many, nil) }); err != nil {
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

// recordHead records the head's steps: the output norm and product, the
// logit scale and soft-cap.
func (b *Backend) recordHead(r *vulkan.Recorder, s bodyShape, last bool) error {
	return b.run(b.prog.head, &walk{r: r, s: s, last: last})
}

// run records steps.
func (b *Backend) run(steps []step, w *walk) error {
	for _, st := range steps {
		if err := st(b, w); err != nil {
			return err
		}
	}
	return nil
}

// recordLogits applies the logit scale and the final soft-cap cp (0: none)
// in place, its tanh the CPU backend's tanhf where the model rounds as the
// CPU's (weights.cpuOrder).
func (b *Backend) recordLogits(r *vulkan.Recorder, s bodyShape, last bool, scale, cp float32) error {
	const wg = 64
	capMode := flag(cp != 0)
	if cp != 0 && b.weights.cpuOrder {
		capMode = 2
	}
	k, err := b.d.kernel("logits", 5*4, wg, capMode)
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
	v := b.plan.Vocab
	return r.Dispatch("logit scale and cap", k, []vulkan.Arg{{B: b.act.logits, Format: fmtU32}, vulkan.W(b.act.logits), vulkan.R(b.graph.step)},
		[]uint32{uint32(v), flag(last), math.Float32bits(scale), math.Float32bits(cp), math.Float32bits(inv)},
		uint32((v+wg-1)/wg), tokens, 1)
}

func flag(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// recordBranchEnd adds a branch's output o to x through its post-norm (nil:
// none, else with epsilon eps) and × scale.
func (b *Backend) recordBranchEnd(r *vulkan.Recorder, label string, norm *vulkan.Buffer, eps, scale float32, s bodyShape) error {
	return b.recordNormInto(r, label, b.act.o, norm, b.act.x, eps, scale, true, s)
}

// recordNormInto records residual.comp over src into dst, n = embd values
// per token: dst += scale · rms(src)·norm (add), or dst = scale ·
// rms(src)·norm; src and dst may be one buffer (a norm in place).
func (b *Backend) recordNormInto(r *vulkan.Recorder, label string, src, norm, dst *vulkan.Buffer, eps, scale float32, add bool, s bodyShape) error {
	return b.d.normInto(r, label, src, norm, dst, b.graph.step, b.plan.Embd, b.act.xStride, eps, scale, add, s.cap)
}

// normInto is recordNormInto's dispatch: n values per token, stride
// floats apart in src and dst, for the step's tokens (tokens the batch
// capacity).
func (d *gpu) normInto(r *vulkan.Recorder, label string, src, norm, dst, step *vulkan.Buffer, n, stride int, eps, scale float32, add bool, tokens int) error {
	const wg = 64
	k, err := d.kernel("residual", 4*4, wg, flag(norm != nil), flag(add))
	if err != nil {
		return err
	}
	nw := norm
	if nw == nil {
		if nw, err = d.dummy(); err != nil {
			return err
		}
	}
	return r.Dispatch(label, k, []vulkan.Arg{{B: src, Format: fmtU32}, {B: nw, Format: fmtU32}, {B: dst, Write: true}, vulkan.R(step), {B: dst, Format: fmtU32}},
		[]uint32{uint32(n), uint32(stride), math.Float32bits(eps), math.Float32bits(scale)},
		uint32(tokens), 1, 1)
}

// recordBody records the input's steps and every layer's; with taps (the
// lens, lens.go) each layer's residual output is copied to its tap.
func (b *Backend) recordBody(r *vulkan.Recorder, s bodyShape, taps []*vulkan.Buffer) error {
	if b.graph.stepHost != nil {
		r.Upload(b.graph.stepHost, b.graph.step) // the step's parameters, once, then read on the device
	}
	w := &walk{r: r, s: s}
	if err := b.run(b.prog.input, w); err != nil {
		return err
	}
	for l, steps := range b.prog.layers {
		if err := b.run(steps, w); err != nil {
			return err
		}
		if taps != nil {
			r.Upload(b.act.x, taps[l])
		}
	}
	return nil
}

// recordEmbed gathers the tokens' rows of m into x, × scale.
func (b *Backend) recordEmbed(r *vulkan.Recorder, s bodyShape, m *Matrix, scale float32) error {
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
		push := []uint32{uint32(m.Units), uint32(m.Cols), uint32(b.act.xStride), uint32(part.row0), uint32(part.rows), math.Float32bits(scale)}
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
