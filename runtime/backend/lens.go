package backend

import (
	"context"
	"math"
	"sort"
)

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

// LensTopOf is the k largest of logits (ties: lower id first) and the
// softmax's denominator, summed in float64, as both backends report a
// layer's lens; order is scratch of at least k. The k are chosen in one
// pass through a heap of k (order holds it) and only they are sorted: a
// full sort of the vocabulary per layer cost more than the layer's head.
func LensTopOf(logits []float32, k int, order []int32) LensTop {
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
	top := LensTop{IDs: make([]int32, k), Logits: make([]float32, k)}
	top.Max = float64(logits[h[0]])
	for _, v := range logits {
		top.SumExp += math.Exp(float64(v) - top.Max)
	}
	for j := 0; j < k; j++ {
		top.IDs[j], top.Logits[j] = h[j], logits[h[j]]
	}
	return top
}
