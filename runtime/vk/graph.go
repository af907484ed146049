package vk

import (
	"fmt"
	"math"
)

// The forward pass as dispatches. Per layer (6 dispatches when Q/K/V and
// gate/up share types):
//
//	matvec   x → qkv      RMSNorm(attn_norm) fused, Q|K|V stacked (+bias)
//	rope     qkv → q, K/V cache at pos..pos+n-1
//	attn     q, cache → att
//	matvec   att → x      Wo with the residual add as epilogue
//	matvec   x → h        RMSNorm(ffn_norm), gate and up paired: silu(g)·u
//	matvec   h → x        down with the residual add
//
// then the head: RMSNorm(output_norm) and the output projection → logits.

// bodyShape is what differs between the decode and prefill recordings: the
// tokens dispatched (kernels skip those past the step's count).
type bodyShape struct {
	cap int
}

func (b *Backend) newRecorder(dispatches int) (*Recorder, error) {
	q := 0
	if b.profile {
		q = dispatches
	}
	return b.d.NewRecorder(q)
}

// record builds the decode command buffer (one token in, its logits out).
// The prefill body and the two heads are recorded on first use: a session
// that only decodes never pays for their pipelines.
func (b *Backend) record() error {
	var err error
	b.decode, err = b.recordWith(func(r *Recorder) error {
		one := bodyShape{cap: 1}
		if err := b.recordBody(r, one); err != nil {
			return err
		}
		return b.recordHead(r, one, true)
	})
	return err
}

// dispatchesPerStep sizes a profiled recorder's timestamp pool: a layer
// takes 6 dispatches, more where matrices are split into parts or K into
// chunks (a 1B model's prefill on lavapipe: 13 per layer). Timestamps are
// cheap; an undersized pool makes Timings fail rather than under-report.
func (b *Backend) dispatchesPerStep() int { return 16 + 64*len(b.layers) }

func (b *Backend) recordWith(f func(*Recorder) error) (*Recorder, error) {
	r, err := b.newRecorder(b.dispatchesPerStep())
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
func (b *Backend) recorders(n int, all, last bool) ([]*Recorder, error) {
	if n == 1 && !all && last {
		return []*Recorder{b.decode}, nil
	}
	var err error
	many := bodyShape{cap: prefillChunk}
	if b.prefill == nil {
		if b.prefill, err = b.recordWith(func(r *Recorder) error { return b.recordBody(r, many) }); err != nil {
			return nil, err
		}
	}
	switch {
	case all:
		if b.headAll == nil {
			if b.headAll, err = b.recordWith(func(r *Recorder) error { return b.recordHead(r, many, false) }); err != nil {
				return nil, err
			}
		}
		return []*Recorder{b.prefill, b.headAll}, nil
	case last:
		if b.headLast == nil {
			if b.headLast, err = b.recordWith(func(r *Recorder) error { return b.recordHead(r, bodyShape{cap: 1}, true) }); err != nil {
				return nil, err
			}
		}
		return []*Recorder{b.prefill, b.headLast}, nil
	}
	return []*Recorder{b.prefill}, nil
}

func (b *Backend) recordHead(r *Recorder, s bodyShape, last bool) error {
	return r.matvec(matvecOp{
		label: "output", m: b.output, x: b.x, xstride: b.xStride, norm: b.outNorm, eps: b.cfg.NormEps,
		y: b.logits, ystride: b.cfg.Vocab, tokens: s.cap, last: last, step: b.step,
	})
}

func (b *Backend) recordBody(r *Recorder, s bodyShape) error {
	c := &b.cfg
	d := b.d
	if err := b.recordEmbed(r, s); err != nil {
		return err
	}
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	kvf32 := uint32(0)
	if b.opts.KVType.Bytes() == 4 {
		kvf32 = 1
	}
	neox := uint32(0)
	if c.Rope.NeoX {
		neox = 1
	}
	rope, err := d.Kernel("rope", 5*4, 64, uint32(c.HeadDim), uint32(c.Rope.Dims), neox, kvf32)
	if err != nil {
		return err
	}
	// one subgroup per workgroup: the kernel reduces with subgroup operations
	sg := d.Info.SureSubgroup()
	attn, err := d.Kernel("attention", 3*4, sg, uint32(c.HeadDim), uint32(c.Heads/c.KVHeads), kvf32, d.tune.attentionOrdered(), sg)
	if err != nil {
		return err
	}
	ropeTable := Arg{B: b.step, Off: uint64(b.ropeOff), Size: b.step.Size - uint64(b.ropeOff), Format: fmtU32x2}
	for l, lw := range b.layers {
		name := func(s string) string { return fmt.Sprintf("L%d %s", l, s) }
		mv := matvecOp{x: b.x, xstride: b.xStride, norm: lw.attnNorm, eps: c.NormEps, y: b.qkv, ystride: b.qkvStride, tokens: s.cap, step: b.step}
		if lw.bias != nil {
			mv.bias, mv.epi = lw.bias, epiBias
		}
		if lw.qkv != nil {
			mv.label, mv.m = name("qkv"), lw.qkv
			if err := r.matvec(mv); err != nil {
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
				if err := r.matvec(op); err != nil {
					return err
				}
			}
		}
		err := r.Dispatch(name("rope"), rope, []Arg{
			{B: b.qkv, Format: fmtU32}, ropeTable, W(b.q), {B: b.kc[l], Write: true, Format: fmtU32}, {B: b.vc[l], Write: true, Format: fmtU32}, R(b.step),
		}, []uint32{uint32(c.Heads), uint32(c.KVHeads), uint32(b.qkvStride), uint32(b.qStride), uint32(b.opts.ContextSize)}, uint32(s.cap), 1, 1)
		if err != nil {
			return err
		}
		err = r.Dispatch(name("attention"), attn, []Arg{R(b.q), R(b.kc[l]), R(b.vc[l]), W(b.att), R(b.step)},
			[]uint32{uint32(b.qStride), uint32(b.opts.ContextSize), math.Float32bits(float32(1 / math.Sqrt(float64(c.HeadDim))))},
			uint32(c.KVHeads), uint32(s.cap), 1)
		if err != nil {
			return err
		}
		if err := r.matvec(matvecOp{label: name("wo"), m: lw.wo, x: b.att, xstride: b.qStride, y: b.x, ystride: b.xStride, epi: epiResidual, tokens: s.cap, step: b.step}); err != nil {
			return err
		}
		ffn := matvecOp{label: name("gate+up"), m: lw.gate, m2: lw.up, x: b.x, xstride: b.xStride, norm: lw.ffnNorm, eps: c.NormEps, y: b.h, y2: b.h2, ystride: b.ffStride, tokens: s.cap, step: b.step}
		if lw.gate.Type == lw.up.Type {
			if err := r.matvec(ffn); err != nil {
				return err
			}
		} else {
			gate := ffn
			gate.label, gate.m2 = name("gate"), nil
			if err := r.matvec(gate); err != nil {
				return err
			}
			upOp := ffn
			upOp.label, upOp.m, upOp.m2, upOp.epi = name("up·silu(gate)"), lw.up, nil, epiSwiGLU
			if err := r.matvec(upOp); err != nil {
				return err
			}
		}
		if err := r.matvec(matvecOp{label: name("down"), m: lw.down, x: b.h, xstride: b.ffStride, y: b.x, ystride: b.xStride, epi: epiResidual, tokens: s.cap, step: b.step}); err != nil {
			return err
		}
	}
	return nil
}

func (b *Backend) recordEmbed(r *Recorder, s bodyShape) error {
	m := b.tokEmbd
	k, err := b.d.Kernel("embed_"+wtypeName(m), 5*4, 32)
	if err != nil {
		return err
	}
	dum, err := b.d.dummy()
	if err != nil {
		return err
	}
	for pi, part := range m.parts {
		args := make([]Arg, 0, 6)
		for i := 0; i < 4; i++ {
			if i < len(part.views) {
				args = append(args, part.views[i])
			} else {
				args = append(args, Arg{B: dum})
			}
		}
		args = append(args, W(b.x), R(b.step))
		push := []uint32{uint32(m.Units), uint32(m.Cols), uint32(b.xStride), uint32(part.row0), uint32(part.rows)}
		if err := r.Dispatch(fmt.Sprintf("embed part %d", pi), k, args, push, uint32(s.cap), 1, 1); err != nil {
			return err
		}
	}
	return nil
}
