package cpu

import (
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/simd"

	"vkchat/runtime/quant"
)

// attention computes causal GQA attention for the n batch tokens at
// positions pos.. against the cache and the batch's own keys, writing s.att.
// On a sliding-window layer a query at q sees keys at q-window+1..q. Work is
// split by KV head so each worker converts its keys and values once and
// serves every query head of its group. The batch's keys are read from the
// activations (rounded as the cache stores them) and stored afterwards, so a
// window's ring never has to hold more than the window.
func (b *Backend) attention(layer, n, pos int) {
	a := &b.layers[layer].att
	window := a.Window
	lo := 0 // the oldest position any query of the batch sees
	if window > 0 {
		lo = max(0, pos-window+1)
	}
	scale := a.Scale // 1 where the plan scales Q instead
	// on the shared pool, whose workers are already spinning between
	// products: a goroutine per head would wait for a wake-up each
	b.call.attn = attnCall{layer: layer, n: n, pos: pos, lo: lo, window: window, scale: scale}
	if a.KVHeads == 1 && a.Heads > 1 && b.inPlace(layer) && b.s.mqaQH != nil {
		// one KV head (MQA; MLA's absorbed form): split by query head,
		// each reading the F16 cache in place, or one worker would run
		// them all
		quant.ParallelRange(a.Heads, 1, b.call.attnQueryHeads)
		return
	}
	quant.ParallelRange(a.KVHeads, 1, b.call.attnHeads)
}

// attnQueryHeadsFn returns the pool function that runs query heads
// [from, to) of an in-place attention with one KV head, each with its own
// rounded query: the same calls attendHead makes for them, so the same
// bits.
func (b *Backend) attnQueryHeadsFn() func(from, to int) {
	return func(from, to int) {
		c, s := &b.call.attn, &b.s
		a := &b.layers[c.layer].att
		hd := a.HeadDim
		qw, cl := a.Heads*hd, b.layers[c.layer].kvLayer
		k16, v16 := b.kv.k16[cl][c.lo*hd:], b.kv.v16[cl][c.lo*hd:]
		for h := from; h < to; h++ {
			qh := s.mqaQH[h*hd : (h+1)*hd]
			for i := 0; i < c.n; i++ {
				o := i*qw + h*hd
				attendCached(s.q[o:o+hd], k16, v16, hd, s.att[o:o+hd], c.pos+i+1-c.lo, c.scale, qh)
			}
		}
	}
}

// inPlace reports whether layer's attention reads the F16 cache in place
// (attendCached): a full-attention layer, whose slots are the positions
// (a window's ring can wrap mid-span, and a batch could overwrite what its
// first queries still need), without a soft-cap or sinks, with native
// kernels.
// Such a layer stores the batch's keys and values before its attention.
// A KV-shared layer is judged by the cache it reads.
func (b *Backend) inPlace(layer int) bool {
	l := &b.layers[layer]
	return b.kv.typ == backend.KVF16 && b.kv.typV == backend.KVF16 && l.att.Window == 0 && b.kv.capacity[l.kvLayer] >= b.opts.ContextSize &&
		l.att.Softcap == 0 && l.sinks == nil && nativeAttention && simd.Level() > 0
}

// attnCall is one attention's arguments, for the pool's range function
// (a closure per call would be an allocation per layer and token).
type attnCall struct {
	layer, n, pos, lo, window int
	scale                     float32
}

// attnHeadsFn returns the pool function that runs KV heads [from, to) of
// the attention in b.call.attn.
func (b *Backend) attnHeadsFn() func(from, to int) {
	return func(from, to int) {
		a := &b.call.attn
		for kvh := from; kvh < to; kvh++ {
			b.attendHead(a.layer, kvh, a.n, a.pos, a.lo, a.window, a.scale)
		}
	}
}

// attendHead is attention for KV head kvh and the query heads of its
// group, against positions lo.. (see attention).
func (b *Backend) attendHead(layer, kvh, n, pos, lo, window int, scale float32) {
	s := &b.s
	a := &b.layers[layer].att
	hd, group := a.HeadDim, a.Heads/a.KVHeads
	qw, kvw := a.Heads*hd, a.KVHeads*a.HeadDim
	cl := b.layers[layer].kvLayer // the cache read: this layer's, or a KV-shared layer's source
	total := pos + n
	ws := &b.attnWork[kvh]
	if b.inPlace(layer) {
		// the batch is already stored: every position is in its slot
		k16, v16 := b.kv.k16[cl][kvh*hd+lo*kvw:], b.kv.v16[cl][kvh*hd+lo*kvw:]
		for g := 0; g < group; g++ {
			h := kvh*group + g
			for i := 0; i < n; i++ {
				o := i*qw + h*hd
				attendCached(s.q[o:o+hd], k16, v16, kvw, s.att[o:o+hd], pos+i+1-lo, scale, ws.qh[:hd])
			}
		}
		return
	}
	if b.kv.quantized() && b.attendQuantNative(layer, kvh, n, pos, lo, window, scale) {
		return
	}
	keys, vals := ws.keys[:(total-lo)*hd], ws.vals[:(total-lo)*hd]
	b.kv.load(cl, kvh, hd, lo, pos, keys, vals)
	if b.kv.quantized() {
		b.attendQuantized(layer, kvh, n, pos, lo, window, scale, keys, vals)
		return
	}
	for i := 0; i < n; i++ {
		o := (pos - lo + i) * hd
		asStored(b.kv.typ, keys[o:o+hd], s.k[i*kvw+kvh*hd:i*kvw+(kvh+1)*hd], nil)
		asStored(b.kv.typV, vals[o:o+hd], s.v[i*kvw+kvh*hd:i*kvw+(kvh+1)*hd], nil)
	}
	for g := 0; g < group; g++ {
		h := kvh*group + g
		for i := 0; i < n; i++ {
			q := s.q[i*qw+h*hd : i*qw+(h+1)*hd]
			out := s.att[i*qw+h*hd : i*qw+(h+1)*hd]
			from := lo // causal: this token and all before it, within the window
			if window > 0 {
				from = max(lo, pos+i-window+1)
			}
			if sinks := b.layers[layer].sinks; sinks != nil {
				// no native kernel takes a sink
				attendPortable(q, keys[(from-lo)*hd:], vals[(from-lo)*hd:], out, pos+i+1-from, scale, a.Softcap, sinks[h], ws.qh[:hd], b.f16Acc)
				continue
			}
			attendOnline(q, keys[(from-lo)*hd:], vals[(from-lo)*hd:], out, pos+i+1-from, scale, a.Softcap, ws.qh[:hd], b.f16Acc)
		}
	}
}

// attendOnline is single-pass softmax attention (running max and sum) as
// llama.cpp's CPU flash attention computes it. With an F16 cache llama.cpp
// rounds the query to F16 and accumulates the weighted values in F16; doing
// the same (f16 true) brings prompt logits within 1e-3 of its dumps (most
// positions to the last printed digit).
//
// A soft-cap c applies to the scaled score before the softmax, as ggml's
// flash attention does it: scale/c folded into the scale, then c·tanh.
func attendOnline(q, keys, vals, out []float32, span int, scale, softcap float32, qh []float32, f16 bool) {
	if attendNative(q, keys, vals, out, span, scale, softcap, qh, f16) {
		return // the same computation with native vector loops
	}
	attendPortable(q, keys, vals, out, span, scale, softcap, noSink, qh, f16)
}

// noSink is attendPortable's sink for attention without one: a logit of
// -Inf takes no probability mass.
var noSink = float32(math.Inf(-1))

// attendPortable is attendOnline in Go, with an attention sink: a logit
// that joins the softmax's denominator after the positions, with no value
// (gpt-oss), folded in as llama.cpp's flash attention does once the values
// are summed.
func attendPortable(q, keys, vals, out []float32, span int, scale, softcap, sink float32, qh []float32, f16 bool) {
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
	acc := online{out: out, f16: f16}
	acc.start()
	for t := 0; t < span; t++ {
		acc.add(vecDot(q, keys[t*hd:(t+1)*hd])*scale, softcap, vals[t*hd:(t+1)*hd])
	}
	acc.finish(sink)
}

// online is the single-pass softmax of llama.cpp's CPU flash attention over
// one query's positions: a running maximum m and sum, the weighted values
// summed into out (rounded to F16 after each step where the cache is F16,
// as ggml's F16 accumulator is).
type online struct {
	out    []float32
	f16    bool
	m, sum float32
}

func (o *online) start() {
	o.m, o.sum = float32(math.Inf(-1)), 0
	clear(o.out)
}

// add folds in one position: its scaled score sc (soft-capped when
// softcap != 0) and its value row v.
func (o *online) add(sc, softcap float32, v []float32) {
	out := o.out
	if softcap != 0 {
		sc = softcap * tanhf(sc)
	}
	ms, vs := float32(1), float32(1)
	if sc > o.m {
		ms = float32(exp64(o.m - sc))
		o.m = sc
		for d := range out {
			out[d] *= ms
		}
		if o.f16 {
			roundAll16(out)
		}
	} else {
		vs = float32(exp64(sc - o.m))
	}
	for d := range out {
		out[d] = fma32(v[d], vs, out[d])
	}
	if o.f16 {
		roundAll16(out)
	}
	o.sum = fma32(o.sum, ms, vs)
}

// finish folds in the sink (noSink: none), which takes probability mass
// and has no value, then divides by the sum.
func (o *online) finish(sink float32) {
	out := o.out
	if sink != noSink {
		ms, vs := float32(1), float32(1)
		if sink > o.m {
			ms = float32(exp64(o.m - sink))
			for d := range out {
				out[d] *= ms
			}
		} else {
			vs = float32(exp64(sink - o.m))
		}
		o.sum = fma32(o.sum, ms, vs)
	}
	inv := 1 / o.sum
	for d := range out {
		out[d] *= inv
	}
}

// round16 rounds x to the nearest F16 value (ties to even). In F16's
// normal range that is rounding the F32 mantissa to 10 bits in place, far
// cheaper than converting there and back; the rest takes the slow path.
func round16(x float32) float32 {
	b := math.Float32bits(x)
	if e := (b >> 23) & 0xff; e >= 127-14 && e <= 127+15 {
		b += 0xfff + (b>>13)&1
		b &^= 0x1fff
		if (b>>23)&0xff <= 127+15 {
			return math.Float32frombits(b)
		}
	}
	return quant.FP16ToFP32(quant.FP32ToFP16(x))
}

func roundAll16(x []float32) {
	for i, v := range x {
		x[i] = round16(v)
	}
}

// vecDot is ggml_vec_dot_f16 (on values already rounded to f16) and
// ggml_vec_dot_f32 as x86 with AVX2 computes them: blocks of 32 in four
// 8-lane f32 FMA accumulators reduced pairwise, then the tail and the total
// in float64. Head dims below 32 are all tail: a float64 sum of products.
// Summing in float32 instead moved the first logit mismatch against
// llama.cpp's stories260K dumps earlier (p3: position 2 instead of 5).
func vecDot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	np := n &^ 31
	var s float64
	if np > 0 {
		var acc [4][8]float32
		for i := 0; i < np; i += 32 {
			for j := range acc {
				for l := range acc[j] {
					k := i + 8*j + l
					acc[j][l] = fma32(a[k], b[k], acc[j][l])
				}
			}
		}
		s = float64(reduce8x4(&acc))
	}
	for i := np; i < n; i++ {
		s += float64(a[i] * b[i])
	}
	return float32(s)
}

// reduce8x4 is GGML_F32x8_REDUCE: accumulators 0+2, 1+3, then 0+1, then the
// 8 lanes as (l0+l4 + l1+l5) + (l2+l6 + l3+l7).
func reduce8x4(acc *[4][8]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	t0, t1, t2, t3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (t0 + t1) + (t2 + t3)
}

// fma32 is a*b+c rounded once to float32, as the FMA instructions the C
// compilers emit for llama.cpp's `y + x*v` and `S*ms + vs` compute it (and
// as the native kernels do, with the same instructions): quant.FMA32.
func fma32(a, b, c float32) float32 { return quant.FMA32(a, b, c) }
