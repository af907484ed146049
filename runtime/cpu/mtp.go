package cpu

import (
	"context"
	"fmt"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// The MTP head (plan.Plan.MTP) runs on a second Backend made from its own
// plan on first use: its layer, cache, rewind and scratch are those of any
// one-layer model, and its weights' repacked copies are the trunk's
// (products find them by the original data). Only its input differs: the
// mix of each row's embedded token with the hidden state it is given.

// HasMTP implements backend.MTPBackend.
func (b *Backend) HasMTP() bool { return b.plan.MTP != nil }

// ForwardHidden implements backend.MTPBackend.
func (b *Backend) ForwardHidden(ctx context.Context, tokens []int32, pos int) ([]float32, []float32, error) {
	hidden := make([]float32, len(tokens)*b.plan.Embd)
	logits, err := b.forward(ctx, tokens, pos, true, hidden)
	if err != nil {
		return nil, nil, err
	}
	return logits, hidden, nil
}

// MTP implements backend.MTPBackend.
func (b *Backend) MTP(ctx context.Context, tokens []int32, hidden []float32, pos int) ([]float32, []float32, error) {
	if b.plan.MTP == nil {
		return nil, nil, fmt.Errorf("cpu backend: %w", backend.ErrNoMTP)
	}
	if b.mtp == nil {
		// made when first asked: a conversation that never drafts keeps
		// no second cache
		m, err := New(b.plan.MTP, b.opts)
		if err != nil {
			return nil, nil, fmt.Errorf("cpu backend: MTP head: %w", err)
		}
		b.mtp = m
	}
	return b.mtp.headRows(ctx, tokens, hidden, pos)
}

// mtpBytes is what the MTP head holds once made (its KV cache and
// buffers; its weights are the trunk's file and copies), counted with
// the scratch: the KV figures describe the trunk's cache.
func (b *Backend) mtpBytes() int64 {
	if b.mtp == nil {
		return 0
	}
	m := b.mtp.Memory()
	return m.KVAllocated + m.Scratch
}

// headRows runs this (MTP head) backend's plan on rows at positions pos..,
// each a token and a hidden state, returning every row's logits and its
// own hidden state, taken as the trunk's is (hiddenRows).
func (b *Backend) headRows(ctx context.Context, tokens []int32, hidden []float32, pos int) ([]float32, []float32, error) {
	if err := b.checkBatch(tokens, pos); err != nil {
		return nil, nil, err
	}
	e, vocab, n := b.plan.Embd, b.plan.Vocab, len(tokens)
	if len(hidden) != n*e {
		return nil, nil, fmt.Errorf("cpu backend: MTP head: %d hidden values for %d rows of %d", len(hidden), n, e)
	}
	defer quant.BeginStep()() // as forward: the team polls between the head's ops
	logits, y := make([]float32, n*vocab), make([]float32, n*e)
	for start := 0; start < n; start += maxBatch {
		if err := ctx.Err(); err != nil {
			b.filled = pos + start
			return nil, nil, err
		}
		end := min(start+maxBatch, n)
		b.forwardPass(pass{tokens: tokens[start:end], n: end - start, pos: pos + start, hidden: hidden[start*e : end*e]})
		b.hiddenRows(y[start*e:], end-start)
		b.logits(logits[start*vocab:end*vocab], 0, end-start)
	}
	copy(b.history[pos:], tokens)
	b.filled = pos + n
	return logits, y, nil
}

// mtpInputStep mixes the embedded tokens in the stream with the pass's
// hidden rows: x = EHProj · [rms(x)·ENorm | rms(h)·HNorm].
func (b *Backend) mtpInputStep(o plan.MTPInput) step {
	e := b.plan.Embd
	proj := quant.Bind(matrix(o.EHProj))
	en, hn := vectorF32(o.ENorm), vectorF32(o.HNorm)
	mix := make([]float32, maxBatch*2*e)
	return func(r *pass) {
		x := b.s.x
		for i := 0; i < r.n; i++ {
			rmsNorm(mix[2*i*e:(2*i+1)*e], x[i*e:(i+1)*e], en, o.Eps)
			rmsNorm(mix[(2*i+1)*e:(2*i+2)*e], r.hidden[i*e:(i+1)*e], hn, o.Eps)
		}
		quant.MatMul(x[:r.n*e], proj, mix[:r.n*2*e], r.n)
	}
}

// hiddenRows writes the hidden state of the batch's first n rows into
// dst: the stream after the final norm, the first step of the plan's head
// (Resolve starts it with the norm of X into In), run on every row. It is
// the normed stream, not the stream before the norm that llama.cpp's
// name for it (h_pre_norm) and the reference's notes say: the
// reference's draft logits and chained drafts are reproduced with the
// normed rows, and miss by tenths of a logit with the raw ones
// (TestMTPMatchesLlamaCpp, TestMTPDraftsMatchLlamaCpp).
func (b *Backend) hiddenRows(dst []float32, n int) {
	e := b.plan.Embd
	b.prog.head[0](&pass{n: n})
	copy(dst[:n*e], b.s.xb[:n*e])
}

// checkHiddenNorm refuses a plan with an MTP head (or one that is one)
// whose head does not start with the norm hiddenRows runs.
func checkHiddenNorm(p *plan.Plan) error {
	mtp := p.MTP != nil
	for _, op := range p.Input {
		if _, ok := op.(plan.MTPInput); ok {
			mtp = true
		}
	}
	if !mtp {
		return nil
	}
	if len(p.Head) > 0 {
		if n, ok := p.Head[0].(plan.Norm); ok && n.In == plan.X && n.Out == plan.In {
			return nil
		}
	}
	return fmt.Errorf("cpu backend: an MTP head needs the hidden state after the final norm, and the plan's head does not start with it")
}

var _ backend.HiddenBackend = (*Backend)(nil)

// KeepHidden implements backend.MTPBackend: the hidden states are kept
// (and cost their copy) only while a drafter reads them; calls pair up,
// so a drafter that replaces another keeps them on when the old one goes.
func (b *Backend) KeepHidden(on bool) {
	b.last.Keep(on, b.plan.MTP != nil)
}

// LastHidden implements backend.HiddenBackend while KeepHidden is on:
// every row read since the previous call, when they follow one another
// (a prefill in chunks), else those since the latest rewind.
func (b *Backend) LastHidden() (int, []float32) {
	return b.last.Take(b.plan.Embd)
}
