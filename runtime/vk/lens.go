package vk

import (
	"context"
	"fmt"

	"vkchat/runtime/backend"

	"vkchat/runtime/vk/vulkan"
)

var _ backend.LensBackend = (*Backend)(nil)

// lensRec is what the logit lens records on its first use: a tap per
// layer (its residual output for a prefill chunk's tokens), the prefill
// body copying each layer's output to its tap, and per layer the head over
// that layer's tap.
type lensRec struct {
	taps  []*vulkan.Buffer
	body  *vulkan.Recorder
	heads []*vulkan.Recorder
}

// Lens implements backend.LensBackend: each chunk of tokens runs through
// the prefill body with every layer's residual output copied out (so the
// cache and the state end as after Forward), then the plan's head runs on
// each layer's copy as it runs on the last layer's output, so that the
// last layer's lens is the model's logits for all tokens to the bit.
func (b *Backend) Lens(ctx context.Context, tokens []int32, pos int, k int) (_ [][]backend.LensTop, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { err = deviceError(err) }()
	vocab := b.plan.Vocab
	if k <= 0 || k > vocab {
		return nil, fmt.Errorf("vulkan backend: lens of %d candidates: want 1 to the vocabulary's %d", k, vocab)
	}
	if err := b.begin(ctx, tokens, pos); err != nil {
		return nil, err
	}
	if err := b.recordLens(); err != nil {
		return nil, fmt.Errorf("vulkan backend: recording the lens: %w", err)
	}
	// the logits on the device become the lens's: no step's any more
	defer func() { b.graph.seq++ }()
	logits := make([]float32, prefillChunk*vocab)
	order := make([]int32, vocab)
	out := make([][]backend.LensTop, 0, len(tokens))
	for start := 0; start < len(tokens); start += prefillChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+prefillChunk, len(tokens))
		n := end - start
		if err := b.runChunk(tokens[start:end], pos+start, []*vulkan.Recorder{b.lens.body}); err != nil {
			return nil, err
		}
		if b.cache.recurrent() {
			b.cache.state.pos = pos + end
		}
		rows := make([][]backend.LensTop, n)
		for l, h := range b.lens.heads {
			if err := b.d.Submit(h); err != nil {
				return nil, fmt.Errorf("vulkan backend: the lens of layer %d at position %d: %w", l, pos+start, err)
			}
			lg, err := b.act.readLogits(n, vocab)
			if err != nil {
				return nil, err
			}
			for i := range logits[:n*vocab] {
				logits[i] = getF32(lg, 4*i)
			}
			for i := range rows {
				rows[i] = append(rows[i], backend.LensTopOf(logits[i*vocab:(i+1)*vocab], k, order))
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// recordLens makes the taps and records the lens's command buffers, once.
func (b *Backend) recordLens() error {
	if b.lens.body != nil {
		return nil
	}
	many := bodyShape{cap: prefillChunk}
	lr := lensRec{taps: make([]*vulkan.Buffer, len(b.plan.Layers))}
	for l := range lr.taps {
		buf, err := b.d.NewBuffer(fmt.Sprintf("lens tap, layer %d", l), b.act.x.Size, vulkan.MemDevice)
		if err != nil {
			return err
		}
		b.buffers = append(b.buffers, buf)
		lr.taps[l] = buf
	}
	var err error
	if lr.body, err = b.recordWith(func(r *vulkan.Recorder) error { return b.recordBody(r, many, lr.taps) }); err != nil {
		return err
	}
	for _, tap := range lr.taps {
		h, err := b.recordWith(func(r *vulkan.Recorder) error {
			r.Upload(tap, b.act.x)
			return b.recordHead(r, many, false)
		})
		if err != nil {
			return err
		}
		lr.heads = append(lr.heads, h)
	}
	b.lens = lr
	return nil
}
