package backend

import "context"

// Head is the top of the last token's next-token distribution, reduced
// where the logits were computed.
type Head struct {
	IDs     []int32   // the best tokens, best first; ties by lower id
	Logits  []float32 // theirs
	Max     float32   // the largest logit of the vocabulary
	Z       float64   // Σ exp(l − Max) over the vocabulary
	Entropy float64   // of the softmax over the vocabulary, nats
	Seq     uint64    // the step, for LastLogits
}

// HeadBackend is a Backend that can reduce the last token's logits to
// their head on its device, so that a decode step reads back k candidates
// instead of the vocabulary (the sampler needs no more unless penalties
// or top-k 0 are in effect).
type HeadBackend interface {
	Backend
	// MaxHead is the largest k ForwardHead serves.
	MaxHead() int
	// ForwardHead is Forward(ctx, tokens, pos, false) returning the best
	// k logits instead of all of them. ok is false when the device could
	// not form the head (a flat distribution with too many near-ties);
	// the caller then reads the logits with LastLogits(head.Seq).
	ForwardHead(ctx context.Context, tokens []int32, pos int, k int) (h Head, ok bool, err error)
	// LastLogits returns the whole vocabulary's logits of step seq, or an
	// error when a later step has replaced them.
	LastLogits(seq uint64) ([]float32, error)
}
