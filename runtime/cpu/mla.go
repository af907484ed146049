package cpu

import (
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// mlaScratch is the batch scratch of multi-head latent attention; nil
// without MLA layers.
type mlaScratch struct {
	qa   []float32 // the query's low-rank projection [n x q_lora]
	q    []float32 // the query per head [n x heads·(nope+rope)]
	kva  []float32 // [latent | k_rope] [n x r+rope]
	gin  []float32 // each head's inputs gathered [heads x n x max(nope, r)]
	gout []float32 // each head's product [heads x n x max(r, v)]
	o    []float32 // the decompressed heads [n x heads·v]
}

func newMLAScratch(p *plan.Plan, n int) *mlaScratch {
	var s *mlaScratch
	for _, l := range p.Layers {
		for _, op := range l.Ops {
			o, ok := op.(plan.MLA)
			if !ok {
				continue
			}
			if s == nil {
				s = &mlaScratch{}
			}
			m := o.Shape
			grow := func(b *[]float32, w int) {
				if len(*b) < n*w {
					*b = make([]float32, n*w)
				}
			}
			grow(&s.qa, m.QLora)
			grow(&s.q, o.Heads*(m.Nope+m.Rope))
			grow(&s.kva, m.CacheRow())
			grow(&s.gin, o.Heads*max(m.Nope, m.KVLora))
			grow(&s.gout, o.Heads*max(m.KVLora, m.V))
			grow(&s.o, o.Heads*m.V)
		}
	}
	return s
}

func (s *mlaScratch) bytes() int64 {
	if s == nil {
		return 0
	}
	return 4 * int64(len(s.qa)+len(s.q)+len(s.kva)+len(s.gin)+len(s.gout)+len(s.o))
}

// headRows is head h's run of rows of a per-head bank (rows rows per head).
func headRows(w plan.Weight, h, rows int) quant.Matrix {
	rb := len(w.Data) / w.Rows
	return quant.Matrix{Type: w.Type, Cols: w.Cols, Rows: rows, Data: w.Data[h*rows*rb : (h+1)*rows*rb]}
}

// mlaStep is an MLA layer's attention in llama.cpp's absorbed form
// (plan.MLA): the query and the compressed row are projected, normed and
// rotated; each head's q_nope is absorbed into the latent by its rows of
// KB; the heads attend as MQA to the cached rows [c | k_rope], the value
// being the row itself, of which the first r are the latent c (the rest,
// the RoPE key's, is computed and dropped: each value dimension is
// summed on its own, so c's are those of attending to c alone); each
// head's latent output is decompressed by its rows of VB into Attn.
func (b *Backend) mlaStep(layer int, o plan.MLA) step {
	m, H := o.Shape, o.Heads
	r, dr, dn, dv := m.KVLora, m.Rope, m.Nope, m.V
	row, qh := m.CacheRow(), dn+dr
	wq, kva := quant.Bind(matrix(o.W.Q)), quant.Bind(matrix(o.W.KVA))
	var qa quant.Matrix
	var qaNorm []float32
	if o.W.QA != nil {
		qa, qaNorm = quant.Bind(matrix(*o.W.QA)), vectorF32(*o.W.QANorm)
	}
	kvNorm := vectorF32(o.W.KVANorm)
	kb, vb := make([]quant.Matrix, H), make([]quant.Matrix, H)
	for h := range kb {
		kb[h], vb[h] = headRows(o.W.KB, h, r), headRows(o.W.VB, h, dv)
	}
	// the heads' products, each with its own input, as one job of the
	// pool per step (MatMulsEach) rather than one per head
	dsts, srcs := make([][]float32, H), make([][]float32, H)
	att := plan.Attention{Heads: H, KVHeads: 1, HeadDim: row, Scale: o.Scale, Cache: o.Cache}
	l := &b.layers[layer]
	l.att, l.kvLayer = att, layer
	attend := b.attentionStep(layer, att)
	if b.ropes[o.Table] == nil {
		b.ropes[o.Table] = ropeFrom(b.plan.Rotations[o.Table])
	}
	rope := b.ropes[o.Table]
	return func(p *pass) {
		n, s, ms := p.n, &b.s, b.mla
		in := b.rows(o.In, p)
		q := ms.q[:n*H*qh]
		if o.W.QA != nil {
			quant.MatMuls([][]float32{ms.qa[:n*m.QLora], ms.kva[:n*row]}, []quant.Matrix{qa, kva}, in, n)
			rmsNormRows(ms.qa[:n*m.QLora], m.QLora, qaNorm, o.Eps)
			quant.MatMul(q, wq, ms.qa[:n*m.QLora], n)
		} else {
			quant.MatMuls([][]float32{q, ms.kva[:n*row]}, []quant.Matrix{wq, kva}, in, n)
		}
		// the cached row: the normed latent, then the rotated RoPE key;
		// the value is the same row (V is a view of K in llama.cpp)
		for i := 0; i < n; i++ {
			a, k := ms.kva[i*row:(i+1)*row], s.k[i*row:(i+1)*row]
			rmsNorm(k[:r], a[:r], kvNorm, o.Eps)
			copy(k[r:], a[r:])
			rope.apply(k[r:], p.pos+i)
			copy(s.v[i*row:(i+1)*row], k)
			for h := 0; h < H; h++ {
				rope.apply(q[(i*H+h)*qh+dn:(i*H+h+1)*qh], p.pos+i)
			}
		}
		// the absorbed query per head: [KB_hᵀ·q_nope | q_rope]
		for h := 0; h < H; h++ {
			in, out := ms.gin[h*n*dn:(h+1)*n*dn], ms.gout[h*n*r:(h+1)*n*r]
			for i := 0; i < n; i++ {
				copy(in[i*dn:(i+1)*dn], q[(i*H+h)*qh:(i*H+h)*qh+dn])
			}
			srcs[h], dsts[h] = in, out
		}
		quant.MatMulsEach(dsts, kb, srcs, n)
		for h := 0; h < H; h++ {
			for i := 0; i < n; i++ {
				dst := s.q[(i*H+h)*row : (i*H+h+1)*row]
				copy(dst[:r], dsts[h][i*r:(i+1)*r])
				copy(dst[r:], q[(i*H+h)*qh+dn:(i*H+h+1)*qh])
			}
		}
		attend(p)
		// decompress each head's latent output: Attn_h = VB_h · o_h[:r]
		for h := 0; h < H; h++ {
			in, out := ms.gin[h*n*r:(h+1)*n*r], ms.gout[h*n*dv:(h+1)*n*dv]
			for i := 0; i < n; i++ {
				copy(in[i*r:(i+1)*r], s.att[(i*H+h)*row:(i*H+h)*row+r])
			}
			srcs[h], dsts[h] = in, out
		}
		quant.MatMulsEach(dsts, vb, srcs, n)
		for h := 0; h < H; h++ {
			for i := 0; i < n; i++ {
				copy(ms.o[(i*H+h)*dv:(i*H+h+1)*dv], dsts[h][i*dv:(i+1)*dv])
			}
		}
		copy(s.att[:n*H*dv], ms.o[:n*H*dv])
	}
}
