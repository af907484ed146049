package cpu

import "vkchat/runtime/plan"

// scratch holds the activations of one batch of up to n tokens, token-major.
// Allocated once so that decoding allocates nothing per token.
type scratch struct {
	x    []float32 // residual stream [n x embd]
	xb   []float32 // normed input [n x embd]
	q    []float32 // [n x heads*headDim]
	k, v []float32 // [n x kvHeads*headDim]
	att  []float32 // attention output [n x heads*headDim]
	proj []float32 // [n x embd]
	gate []float32 // [n x ff]
	up   []float32 // [n x ff]
	// shared[l]: the batch's keys then values of a layer whose cache a
	// KV-shared layer reads, kept for it ([2 x n x its width]; nil for
	// other layers)
	shared [][]float32
	ple    *pleScratch // per-layer embeddings (gemma4); nil without
	// mqaQH holds each query head's F16-rounded query where a layer
	// attends with one KV head (attention.go); nil without such layers
	mqaQH []float32
}

// Sizes are the widest layer's (layers may differ: widest).
func newScratch(p *plan.Plan, n int) scratch {
	e, w := p.Embd, p.Widest
	s := scratch{
		x: make([]float32, n*e), xb: make([]float32, n*e),
		q: make([]float32, n*w.Q), k: make([]float32, n*w.KV), v: make([]float32, n*w.KV),
		att: make([]float32, n*w.Q), proj: make([]float32, n*e),
		gate: make([]float32, n*w.FF), up: make([]float32, n*w.FF),
		shared: make([][]float32, len(p.Layers)),
	}
	for _, op := range p.Input {
		if o, ok := op.(plan.PerLayerInputs); ok {
			s.ple = newPLEScratch(o.PLE, len(p.Layers), n)
		}
	}
	for _, l := range p.Layers {
		for _, op := range l.Ops {
			if a, ok := op.(plan.Attention); ok && a.KVHeads == 1 && a.Heads > 1 {
				s.mqaQH = make([]float32, p.Heads*w.HeadDim)
			}
			if _, ok := op.(plan.MLA); ok {
				s.mqaQH = make([]float32, p.Heads*w.HeadDim)
			}
		}
	}
	// a cache slot that KV-shared layers read keeps the batch's keys and
	// values for them
	for _, l := range p.Layers {
		for _, op := range l.Ops {
			if a, ok := op.(plan.Attention); ok && a.Shared {
				src := p.Cache[a.Cache]
				if s.shared[src.Layer] == nil {
					s.shared[src.Layer] = make([]float32, 2*n*src.Width())
				}
			}
		}
	}
	return s
}

func (s *scratch) bytes() int64 {
	n := len(s.x) + len(s.xb) + len(s.q) + len(s.k) + len(s.v) + len(s.att) + len(s.proj) + len(s.gate) + len(s.up) + len(s.mqaQH)
	for _, b := range s.shared {
		n += len(b)
	}
	return int64(n)*4 + s.ple.bytes()
}
