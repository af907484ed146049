package cpu

import (
	"context"
	"fmt"

	"vkchat/runtime/backend"
)

// Lens implements backend.LensBackend: the batch runs through the plan
// with every layer's residual output kept (the tap in forwardBatch), then
// the plan's head runs on each layer's rows as it runs on the last one's,
// so that the last layer's lens is the model's logits to the bit.
func (b *Backend) Lens(ctx context.Context, tokens []int32, pos int, k int) ([][]backend.LensTop, error) {
	if k <= 0 || k > b.plan.Vocab {
		return nil, fmt.Errorf("cpu backend: lens of %d candidates: want 1 to the vocabulary's %d", k, b.plan.Vocab)
	}
	e, layers, vocab := b.plan.Embd, len(b.plan.Layers), b.plan.Vocab
	taps := make([][]float32, layers)
	for l := range taps {
		taps[l] = make([]float32, maxBatch*e)
	}
	b.tap = func(layer, n int) { copy(taps[layer][:n*e], b.s.x[:n*e]) }
	defer func() { b.tap = nil }()
	logits := make([]float32, maxBatch*vocab)
	order := make([]int32, vocab)
	out := make([][]backend.LensTop, 0, len(tokens))
	for start := 0; start < len(tokens); start += maxBatch {
		end := min(start+maxBatch, len(tokens))
		n := end - start
		// one batch per Forward, so that the taps hold this batch's rows
		if _, err := b.Forward(ctx, tokens[start:end], pos+start, false); err != nil {
			return nil, err
		}
		rows := make([][]backend.LensTop, n)
		for l := 0; l < layers; l++ {
			copy(b.s.x[:n*e], taps[l][:n*e])
			b.logits(logits, 0, n)
			for i := 0; i < n; i++ {
				rows[i] = append(rows[i], backend.LensTopOf(logits[i*vocab:(i+1)*vocab], k, order))
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}
