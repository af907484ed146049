package cpu

import (
	"context"
	"fmt"
	"math"
	"sort"

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
				rows[i] = append(rows[i], lensTop(logits[i*vocab:(i+1)*vocab], k, order))
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// lensTop is the k largest of logits (ties: lower id first) and the
// softmax's denominator, summed in float64. The k are chosen in one pass
// through a heap of k (order holds it) and only they are sorted: a full
// sort of the vocabulary per layer cost more than the layer's head.
func lensTop(logits []float32, k int, order []int32) backend.LensTop {
	// ahead reports whether id a ranks before id b
	ahead := func(a, b int32) bool {
		la, lb := logits[a], logits[b]
		return la > lb || (la == lb && a < b)
	}
	h := order[:0]
	// h is a heap whose root is the candidate ranked last
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && ahead(h[c], h[c+1]) {
				c++
			}
			if !ahead(h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for id := range logits {
		v := int32(id)
		if len(h) < k {
			h = append(h, v)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !ahead(h[p], h[i]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if ahead(v, h[0]) {
			h[0] = v
			down(0)
		}
	}
	sort.Slice(h, func(a, b int) bool { return ahead(h[a], h[b]) })
	top := backend.LensTop{IDs: make([]int32, k), Logits: make([]float32, k)}
	top.Max = float64(logits[h[0]])
	for _, v := range logits {
		top.SumExp += math.Exp(float64(v) - top.Max)
	}
	for j := 0; j < k; j++ {
		top.IDs[j], top.Logits[j] = h[j], logits[h[j]]
	}
	return top
}
