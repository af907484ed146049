package cpu

import (
	"math"

	"vkchat/runtime/quant"
)

// attention computes causal GQA attention for the n batch tokens at
// positions pos.. against the cache, writing s.att. Work is split by KV head
// so each worker converts its keys and values from the cache once and serves
// every query head of its group.
func (b *Backend) attention(layer, n, pos int) {
	c := &b.m.Config
	s := &b.s
	hd, group := c.HeadDim, c.Heads/c.KVHeads
	qw := c.Heads * hd
	total := pos + n
	scale := float32(1 / math.Sqrt(float64(hd)))
	parallelFor(c.KVHeads, b.opts.Threads, func(kvh int) {
		ws := &b.attnWork[kvh]
		keys, vals := ws.keys[:total*hd], ws.vals[:total*hd]
		b.kv.load(layer, kvh, hd, total, keys, vals)
		for g := 0; g < group; g++ {
			h := kvh*group + g
			for i := 0; i < n; i++ {
				q := s.q[i*qw+h*hd : i*qw+(h+1)*hd]
				out := s.att[i*qw+h*hd : i*qw+(h+1)*hd]
				// causal: this token and all before it
				attendOnline(q, keys, vals, out, pos+i+1, scale, ws.qh, b.f16Acc)
			}
		}
	})
}

// attendOnline is single-pass softmax attention (running max and sum) as
// llama.cpp's CPU flash attention computes it. With an F16 cache llama.cpp
// rounds the query to F16 and accumulates the weighted values in F16; doing
// the same (f16 true) makes prompt logits agree with its dumps to the last
// printed digit instead of ~1e-3.
func attendOnline(q, keys, vals, out []float32, span int, scale float32, qh []float32, f16 bool) {
	hd := len(q)
	if f16 {
		for d := range q {
			qh[d] = round16(q[d])
		}
		q = qh
	}
	m := float32(math.Inf(-1))
	var sum float32
	clear(out)
	for t := 0; t < span; t++ {
		sc := dot(q, keys[t*hd:(t+1)*hd]) * scale
		ms, vs := float32(1), float32(1)
		if sc > m {
			ms = float32(math.Exp(float64(m - sc)))
			m = sc
			for d := range out {
				out[d] *= ms
			}
			if f16 {
				roundAll16(out)
			}
		} else {
			vs = float32(math.Exp(float64(sc - m)))
		}
		v := vals[t*hd : (t+1)*hd]
		for d := range out {
			out[d] += v[d] * vs
		}
		if f16 {
			roundAll16(out)
		}
		sum = sum*ms + vs
	}
	inv := 1 / sum
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
