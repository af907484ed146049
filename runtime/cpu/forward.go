package cpu

import "vkchat/runtime/quant"

// forwardBatch runs tokens (at most maxBatch) at positions pos.. through
// every layer, leaving the final residual stream in s.x.
func (b *Backend) forwardBatch(tokens []int32, pos int) {
	c := &b.m.Config
	n, e := len(tokens), c.Embd
	s := &b.s
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	emb := matrix(b.m.TokenEmbd)
	rowBytes := len(emb.Data) / emb.Rows
	for i, t := range tokens {
		row := emb.Data[int(t)*rowBytes : (int(t)+1)*rowBytes]
		_ = quant.Dequantize(emb.Type, row, s.x[i*e:(i+1)*e])
	}
	for l := range b.m.Layers {
		L, w := &b.m.Layers[l], &b.norms[l]
		for i := 0; i < n; i++ {
			rmsNorm(s.xb[i*e:(i+1)*e], s.x[i*e:(i+1)*e], w.attn, c.NormEps)
		}
		quant.MatMul(s.q[:n*qw], matrix(L.Wq), s.xb[:n*e], n)
		quant.MatMul(s.k[:n*kvw], matrix(L.Wk), s.xb[:n*e], n)
		quant.MatMul(s.v[:n*kvw], matrix(L.Wv), s.xb[:n*e], n)
		if w.bq != nil {
			for i := 0; i < n; i++ {
				addTo(s.q[i*qw:(i+1)*qw], w.bq)
				addTo(s.k[i*kvw:(i+1)*kvw], w.bk)
				addTo(s.v[i*kvw:(i+1)*kvw], w.bv)
			}
		}
		for i := 0; i < n; i++ {
			for h := 0; h < c.Heads; h++ {
				b.rope.apply(s.q[i*qw+h*c.HeadDim:i*qw+(h+1)*c.HeadDim], pos+i)
			}
			for h := 0; h < c.KVHeads; h++ {
				b.rope.apply(s.k[i*kvw+h*c.HeadDim:i*kvw+(h+1)*c.HeadDim], pos+i)
			}
			b.kv.store(l, pos+i, s.k[i*kvw:(i+1)*kvw], s.v[i*kvw:(i+1)*kvw])
		}
		b.attention(l, n, pos)
		quant.MatMul(s.proj[:n*e], matrix(L.Wo), s.att[:n*qw], n)
		addTo(s.x[:n*e], s.proj[:n*e])

		for i := 0; i < n; i++ {
			rmsNorm(s.xb[i*e:(i+1)*e], s.x[i*e:(i+1)*e], w.ffn, c.NormEps)
		}
		ff := c.FF
		quant.MatMul(s.gate[:n*ff], matrix(L.Gate), s.xb[:n*e], n)
		quant.MatMul(s.up[:n*ff], matrix(L.Up), s.xb[:n*e], n)
		for i, g := range s.gate[:n*ff] {
			s.gate[i] = silu(g) * s.up[i]
		}
		quant.MatMul(s.proj[:n*e], matrix(L.Down), s.gate[:n*ff], n)
		addTo(s.x[:n*e], s.proj[:n*e])
	}
}

// logits applies the final norm and output projection to batch rows
// [from, to) of s.x, writing (to-from) x vocab values into out.
func (b *Backend) logits(out []float32, from, to int) {
	c := &b.m.Config
	e, s := c.Embd, &b.s
	for i := from; i < to; i++ {
		rmsNorm(s.xb[(i-from)*e:(i-from+1)*e], s.x[i*e:(i+1)*e], b.outNorm, c.NormEps)
	}
	quant.MatMul(out[:(to-from)*c.Vocab], matrix(b.m.Output), s.xb[:(to-from)*e], to-from)
}

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
