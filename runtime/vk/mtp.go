package vk

import (
	"context"
	"fmt"
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"

	"vkchat/runtime/vk/vulkan"
)

// The MTP head (plan.Plan.MTP) runs on a second Backend made from its own
// plan on first use, on the trunk's device: its layer, cache and rewind
// are those of any one-layer model; the matrices it shares with the trunk
// (the embedding, the output) are the trunk's on the device. Its input is the mtp-input op: the
// embedded tokens and the hidden rows each RMS-normed (residual.comp's
// norm into a zeroed buffer), copied side by side per row and multiplied
// by eh_proj. The hidden state a row hands on is the stream after the
// head's first norm (the output norm, which the logits product otherwise
// folds in), materialised by the same norm kernel into a buffer the host
// reads: the reference's logits are reproduced with the normed stream
// (see the cpu backend's hiddenRows).

var (
	_ backend.MTPBackend    = (*Backend)(nil)
	_ backend.HiddenBackend = (*Backend)(nil)
)

// mtpState is what the trunk keeps for an MTP head, and what the head
// keeps for its input.
type mtpState struct {
	head *Backend // the MTP head, made on first use

	// normed: each row's stream after the head's first norm,
	// [prefillChunk][xStride], written by rec; nil without an MTP head
	normed *vulkan.Buffer
	rec    *vulkan.Recorder

	last backend.KeptHidden

	// the head's input (an MTPInput in the plan's input): the hidden rows
	// given (in), the two normed halves and their concatenation
	in, e, h, mix *vulkan.Buffer
}

// needsMTP reports whether p is an MTP head's plan (its input mixes in
// hidden rows).
func needsMTP(p *plan.Plan) bool {
	for _, op := range p.Input {
		if _, ok := op.(plan.MTPInput); ok {
			return true
		}
	}
	return false
}

// allocateMTP makes the buffers of the hidden rows, for a model with an
// MTP head or a head itself.
func (b *Backend) allocateMTP(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	p, m := b.plan, &b.mtp
	head := needsMTP(p)
	if p.MTP == nil && !head {
		return nil
	}
	if len(p.Head) == 0 {
		return fmt.Errorf("an MTP head needs the hidden state after the final norm, and the plan has no head")
	}
	if n, ok := p.Head[0].(plan.Norm); !ok || n.In != plan.X || n.Out != plan.In || n.Weight == nil {
		return fmt.Errorf("an MTP head needs the hidden state after the final norm, and the plan's head does not start with it")
	}
	rows := prefillChunk * b.act.xStride
	var err error
	if m.normed, err = act("hidden rows after the output norm", rows, vulkan.MemDevice); err != nil {
		return err
	}
	if !head {
		return nil
	}
	for _, buf := range []struct {
		p    **vulkan.Buffer
		name string
		n    int
	}{{&m.in, "MTP hidden rows", rows}, {&m.e, "MTP normed embeddings", rows}, {&m.h, "MTP normed hidden rows", rows},
		{&m.mix, "MTP [e|h] rows", prefillChunk * 2 * p.Embd}} {
		if *buf.p, err = act(buf.name, buf.n, vulkan.MemDevice); err != nil {
			return err
		}
	}
	return nil
}

// recordNorm writes rms(src)·w into dst for the step's tokens (rows of
// Embd values at the x stride): residual.comp's norm added to dst zeroed.
func (b *Backend) recordNorm(r *vulkan.Recorder, label string, src, w, dst *vulkan.Buffer, eps float32, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("residual", 4*4, wg, 1)
	if err != nil {
		return err
	}
	r.Fill(vulkan.Arg{B: dst}, 0)
	return r.Dispatch(label, k, []vulkan.Arg{{B: src, Format: fmtU32}, {B: w, Format: fmtU32}, {B: dst, Write: true}, vulkan.R(b.graph.step), {B: dst, Format: fmtU32}},
		[]uint32{uint32(b.plan.Embd), uint32(b.act.xStride), math.Float32bits(eps), math.Float32bits(1)},
		uint32(s.cap), 1, 1)
}

// recordHidden records the normed rows of a chunk into mtp.normed, once.
func (b *Backend) recordHidden() error {
	if b.mtp.rec != nil {
		return nil
	}
	nw := b.weights.at(opRef{secHead, 0})
	rec, err := b.recordWith(func(r *vulkan.Recorder) error {
		return b.recordNorm(r, "hidden rows", b.act.x, nw.vec, b.mtp.normed, nw.eps, bodyShape{cap: prefillChunk})
	})
	if err != nil {
		return fmt.Errorf("vulkan backend: recording the hidden rows: %w", err)
	}
	b.mtp.rec = rec
	return nil
}

// readHidden copies the first n normed rows of the last step into dst.
func (b *Backend) readHidden(dst []float32, n int) error {
	e, xs := b.plan.Embd, b.act.xStride
	buf := make([]byte, 4*((n-1)*xs+e))
	if err := b.mtp.normed.Read(0, buf); err != nil {
		return fmt.Errorf("vulkan backend: reading the hidden rows: %w", err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < e; j++ {
			dst[i*e+j] = getF32(buf, 4*(i*xs+j))
		}
	}
	return nil
}

// mtpInput compiles the MTP head's input mix: x = EHProj · [rms(x)·ENorm |
// rms(h)·HNorm] per row.
func (c *compiler) mtpInput(o plan.MTPInput) error {
	c.wroteX()
	ref := c.ref(c.i)
	c.add(func(b *Backend, w *walk) error {
		bw, m := b.weights.at(ref), &b.mtp
		if err := b.recordNorm(w.r, "mtp enorm", b.act.x, bw.vec, m.e, o.Eps, w.s); err != nil {
			return err
		}
		if err := b.recordNorm(w.r, "mtp hnorm", m.in, bw.hnorm, m.h, o.Eps, w.s); err != nil {
			return err
		}
		e, xs := uint64(b.plan.Embd), uint64(b.act.xStride)
		for t := uint64(0); t < uint64(w.s.cap); t++ {
			w.r.CopyRange(m.e, m.mix, 4*t*xs, 4*t*2*e, 4*e)
			w.r.CopyRange(m.h, m.mix, 4*t*xs, 4*(t*2*e+e), 4*e)
		}
		op := matvecOp{label: "eh_proj", m: bw.mats[0], x: m.mix, xstride: 2 * b.plan.Embd, y: b.act.x, ystride: b.act.xStride,
			epi: epiStore, tokens: w.s.cap, step: b.graph.step}
		return b.d.matvec(w.r, op)
	})
	return nil
}

// HasMTP implements backend.MTPBackend.
func (b *Backend) HasMTP() bool { return b.plan.MTP != nil }

// ForwardHidden implements backend.MTPBackend.
func (b *Backend) ForwardHidden(ctx context.Context, tokens []int32, pos int) (_, _ []float32, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { err = deviceError(err) }()
	if b.plan.MTP == nil {
		return nil, nil, fmt.Errorf("vulkan backend: %w", backend.ErrNoMTP)
	}
	hidden := make([]float32, len(tokens)*b.plan.Embd)
	logits, err := b.forwardRows(ctx, tokens, pos, nil, hidden)
	if err != nil {
		return nil, nil, err
	}
	return logits, hidden, nil
}

// MTP implements backend.MTPBackend.
func (b *Backend) MTP(ctx context.Context, tokens []int32, hidden []float32, pos int) (_, _ []float32, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { err = deviceError(err) }()
	if b.plan.MTP == nil {
		return nil, nil, fmt.Errorf("vulkan backend: %w", backend.ErrNoMTP)
	}
	if b.closed {
		return nil, nil, fmt.Errorf("vulkan backend: closed")
	}
	if b.mtp.head == nil {
		// made when first asked: a conversation that never drafts keeps
		// no second cache
		h, err := newBackendOn(b.d, b.plan.MTP, b.opts, false, true, b.weights.mats)
		if err != nil {
			return nil, nil, fmt.Errorf("vulkan backend: MTP head: %w", err)
		}
		b.mtp.head = h
	}
	h := b.mtp.head
	if len(hidden) != len(tokens)*h.plan.Embd {
		return nil, nil, fmt.Errorf("vulkan backend: MTP head: %d hidden values for %d rows of %d", len(hidden), len(tokens), h.plan.Embd)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	y := make([]float32, len(tokens)*h.plan.Embd)
	logits, err := h.forwardRows(ctx, tokens, pos, hidden, y)
	if err != nil {
		return nil, nil, fmt.Errorf("MTP head: %w", err)
	}
	return logits, y, nil
}

// forwardRows runs tokens at positions pos.. with every row's logits,
// writing each row's normed stream into out; in, for an MTP head, is each
// row's hidden input.
func (b *Backend) forwardRows(ctx context.Context, tokens []int32, pos int, in, out []float32) ([]float32, error) {
	if err := b.begin(ctx, tokens, pos); err != nil {
		return nil, err
	}
	if err := b.recordHidden(); err != nil {
		return nil, err
	}
	vocab, e, xs := b.plan.Vocab, b.plan.Embd, b.act.xStride
	logits := make([]float32, len(tokens)*vocab)
	for start := 0; start < len(tokens); start += prefillChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+prefillChunk, len(tokens))
		n := end - start
		if in != nil {
			buf := make([]byte, 4*((n-1)*xs+e))
			for i := 0; i < n; i++ {
				for j := 0; j < e; j++ {
					putF32(buf, 4*(i*xs+j), in[(start+i)*e+j])
				}
			}
			if err := b.mtp.in.Write(0, buf); err != nil {
				return nil, fmt.Errorf("vulkan backend: writing the hidden rows: %w", err)
			}
		}
		runs, err := b.recorders(n, true, end == len(tokens))
		if err != nil {
			return nil, fmt.Errorf("vulkan backend: recording the prefill pass: %w", err)
		}
		runs = append(runs[:len(runs):len(runs)], b.mtp.rec)
		if err := b.runChunk(tokens[start:end], pos+start, runs); err != nil {
			return nil, err
		}
		if b.cache.recurrent() {
			b.cache.state.pos = pos + end
		}
		lg, err := b.act.readLogits(n, vocab)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n*vocab; i++ {
			logits[start*vocab+i] = getF32(lg, 4*i)
		}
		if err := b.readHidden(out[start*e:], n); err != nil {
			return nil, err
		}
	}
	return logits, nil
}

// keepChunk reads the normed rows of a chunk Forward ran (n tokens at pos)
// into the kept hidden state, while on.
func (b *Backend) keepChunk(pos, n int) error {
	if !b.mtp.last.On() {
		return nil
	}
	dst := b.mtp.last.Extend(pos, n, b.plan.Embd)
	if err := b.readHidden(dst, n); err != nil {
		return err
	}
	b.mtp.last.Done(n)
	return nil
}

// KeepHidden implements backend.MTPBackend: the hidden rows are kept (and
// cost their norm and read-back) only while a drafter reads them; calls
// pair up.
func (b *Backend) KeepHidden(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mtp.last.Keep(on, b.plan.MTP != nil)
}

// LastHidden implements backend.HiddenBackend while KeepHidden is on.
func (b *Backend) LastHidden() (int, []float32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mtp.last.Take(b.plan.Embd)
}
