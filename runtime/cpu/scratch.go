package cpu

import "vkchat/runtime/arch"

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
}

func newScratch(c *arch.Config, n int) scratch {
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	return scratch{
		x: make([]float32, n*c.Embd), xb: make([]float32, n*c.Embd),
		q: make([]float32, n*q), k: make([]float32, n*kv), v: make([]float32, n*kv),
		att: make([]float32, n*q), proj: make([]float32, n*c.Embd),
		gate: make([]float32, n*c.FF), up: make([]float32, n*c.FF),
	}
}

func (s *scratch) bytes() int64 {
	n := len(s.x) + len(s.xb) + len(s.q) + len(s.k) + len(s.v) + len(s.att) + len(s.proj) + len(s.gate) + len(s.up)
	return int64(n) * 4
}
