package backend

import "context"

// LensBackend is implemented by backends that can read the logit lens:
// each layer's residual output put through the model's own final stage
// (final norm, output head, logit scale, soft-cap) as if it were the last
// layer's. It costs a vocabulary-sized product per layer per token, so the
// engine asks for it only on demand.
type LensBackend interface {
	Backend
	// Lens runs tokens at positions pos.. exactly as Forward does (the
	// cache and state end up the same) and returns, for every token and
	// every layer, the k largest lens logits: out[token][layer]. The last
	// layer's are the model's own logits.
	Lens(ctx context.Context, tokens []int32, pos int, k int) ([][]LensTop, error)
}

// LensTop is one layer's lens at one position: the k best token ids by
// logit (descending, ties by lower id) and the softmax's denominator over
// the whole vocabulary as its largest logit Max and SumExp, the sum of
// exp(logit - Max) in float64, so that a probability is
// exp(logit - Max) / SumExp.
type LensTop struct {
	IDs         []int32
	Logits      []float32
	Max, SumExp float64
}
