package cpu

import (
	"math"
	"sync"

	"vkchat/runtime/simd"
)

// nativeAttention lets tests run attendOnline's portable loops on a machine
// with native kernels.
var nativeAttention = true

// attendBuf holds one query's per-position softmax terms.
type attendBuf struct {
	scores, ms, vs []float32
	rescale        []uint8
}

// attendBufs recycles attendBuf across queries and workers; in steady state
// it hands back the same buffers, so attention allocates nothing per token.
var attendBufs = sync.Pool{New: func() any { return new(attendBuf) }}

// attendNative is attendOnline with its two vector loops (the scores and
// the value accumulation) in native code: the scores for all positions
// first, then the running maximum, the exponentials and the running sum in
// Go exactly as attendOnline computes them, then the values. Every float
// operation is the same as attendOnline's, in the same order, so the
// result is bit-identical. It reports false, having done nothing, where
// there are no native kernels.
func attendNative(q, keys, vals, out []float32, span int, scale, softcap float32, qh []float32, f16 bool) bool {
	if !nativeAttention || simd.Level() == 0 {
		return false
	}
	hd := len(q)
	if softcap != 0 {
		scale /= softcap
	}
	if f16 {
		for d := range q {
			qh[d] = round16(q[d])
		}
		q = qh
	}
	b := attendBufs.Get().(*attendBuf)
	defer attendBufs.Put(b)
	if cap(b.scores) < span {
		b.scores, b.ms, b.vs, b.rescale = make([]float32, span), make([]float32, span), make([]float32, span), make([]uint8, span)
	}
	sc, ms, vs, rescale := b.scores[:span], b.ms[:span], b.vs[:span], b.rescale[:span]
	simd.AttnScores(q, keys[:span*hd], sc)
	m := float32(math.Inf(-1))
	var sum float32
	for t, s := range sc {
		s *= scale
		if softcap != 0 {
			s = softcap * tanhf(s)
		}
		mt, vt, r := float32(1), float32(1), uint8(0)
		if s > m {
			mt, r = float32(math.Exp(float64(m-s))), 1
			m = s
		} else {
			vt = float32(math.Exp(float64(s - m)))
		}
		ms[t], vs[t], rescale[t] = mt, vt, r
		sum = fma32(sum, mt, vt)
	}
	clear(out)
	simd.AttnAccumulate(out, vals[:span*hd], ms, vs, rescale, f16)
	inv := 1 / sum
	for d := range out {
		out[d] *= inv
	}
	return true
}
