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
	work    []float32 // scores, ms, vs: span each
	rescale []uint8
}

// attendBufs recycles attendBuf across queries and workers; in steady state
// it hands back the same buffers, so attention allocates nothing per token.
var attendBufs = sync.Pool{New: func() any { return new(attendBuf) }}

// attendNative is attendOnline in native code. Without a soft-cap all of
// it is one call (simd.AttnOnline: scores, running maximum, exponentials
// eight at a time, sum, values); with one (tanh stays in Go), the scores
// for all positions first, then the running maximum, the exponentials and
// the running sum in Go exactly as attendOnline computes them, then the
// values. Every float operation is the same as attendOnline's, in the
// same order, so the result is bit-identical. It reports false, having
// done nothing, where there are no native kernels.
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
	b := getAttendBuf(span)
	defer attendBufs.Put(b)
	if softcap == 0 {
		// all in one native call, exponentials included
		return simd.AttnOnline(q, keys, vals, out, span, scale, f16, b.work, b.rescale)
	}
	sc, ms, vs, rescale := b.work[:span], b.work[span:2*span], b.work[2*span:3*span], b.rescale[:span]
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
			mt, r = float32(exp64(m-s)), 1
			m = s
		} else {
			vt = float32(exp64(s - m))
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

// getAttendBuf returns a recycled attendBuf with room for span positions.
func getAttendBuf(span int) *attendBuf {
	b := attendBufs.Get().(*attendBuf)
	if len(b.rescale) < span {
		b.work, b.rescale = make([]float32, 3*span), make([]uint8, span)
	}
	return b
}

// attendCached is attendOnline with an F16 cache read in place (F16
// accumulation, no soft-cap): keys and vals hold position t at t*stride
// halves, so a decode step widens nothing. It is bit-identical to
// attendOnline on the widened copy. Only for layers inPlace accepts,
// which have native kernels.
func attendCached(q []float32, keys, vals []uint16, stride int, out []float32, span int, scale float32, qh []float32) {
	for d := range q {
		qh[d] = round16(q[d])
	}
	b := getAttendBuf(span)
	defer attendBufs.Put(b)
	simd.AttnOnlineF16(qh, keys, vals, stride, out, span, scale, true, b.work, b.rescale)
}
