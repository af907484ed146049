package cpu

import (
	"vkchat/runtime/arch"
	"vkchat/runtime/quant"
)

// forwardBatch runs tokens (at most maxBatch) at positions pos.. through
// every layer, leaving the final residual stream in s.x. It interprets the
// model's block recipe (arch.Block):
//
//	a = PreNorm ? rms(x)·attn_norm : x
//	q, k = QKNorm(Wq·a + bq), QKNorm(Wk·a + bk); rope unless NoPE; q ×= scale if ScaleQ
//	x += ResidualScale · PostNorm(Wo·attention(q, k, Wv·a + bv))
//	f = PreNorm ? rms(x)·ffn_norm : x
//	x += ResidualScale · PostNorm(down(act(gate·f) * up·f))   (or the routed experts': moe.go)
//	x += PLE term (ple.go); x ×= layer_output_scale          (gemma4)
//
// Each layer has its own head size, KV heads and FF width (arch.LayerConfig);
// a KV-shared layer computes only Q and attends to its source layer's cache.
func (b *Backend) forwardBatch(tokens []int32, pos int) {
	c := &b.m.Config
	n, e := len(tokens), c.Embd
	s := &b.s
	emb := matrix(b.m.TokenEmbd)
	rowBytes := len(emb.Data) / emb.Rows
	for i, t := range tokens {
		row := emb.Data[int(t)*rowBytes : (int(t)+1)*rowBytes]
		_ = quant.Dequantize(emb.Type, row, s.x[i*e:(i+1)*e])
	}
	if c.EmbedScale != 1 {
		scaleAll(s.x[:n*e], c.EmbedScale)
	}
	if b.m.PLE != nil {
		b.pleInputs(tokens)
	}
	for l := range b.m.Layers {
		L, w := &b.m.Layers[l], &b.layers[l]
		hd, kvh := L.Config.HeadDim, L.Config.KVHeads
		qw, kvw := c.Heads*hd, kvh*hd
		in := b.preNorm(s.x[:n*e], w.attn, n)
		if L.ShortConv != nil {
			b.shortConv(l, in, n) // a recurrent mixer in place of attention (shortconv.go)
			b.residual(s.proj[:n*e], nil, n)
			b.ffn(l, L, w, n)
			continue
		}
		if L.DeltaNet != nil {
			b.deltaNet(l, L.DeltaNet, in, n) // a recurrent mixer in place of attention (deltanet.go)
			b.residual(s.proj[:n*e], w.postAttn, n)
			b.ffn(l, L, w, n)
			continue
		}
		shared := L.Config.SharesKV(l)
		if shared {
			// Q only: the keys and values are the source layer's,
			// already in its cache, and this batch's kept for us
			quant.MatMul(s.q[:n*qw], w.mats.q, in, n)
			kept := s.shared[L.Config.KVLayer]
			copy(s.k[:n*kvw], kept[:n*kvw])
			copy(s.v[:n*kvw], kept[len(kept)/2:len(kept)/2+n*kvw])
		} else if c.Block.AttnGate {
			b.gatedQ(L, in, n)
			quant.MatMuls([][]float32{s.k[:n*kvw], s.v[:n*kvw]}, []quant.Matrix{w.mats.k, w.mats.v}, in, n)
		} else {
			// one job for the three: x converted once, workers handed out once
			quant.MatMuls([][]float32{s.q[:n*qw], s.k[:n*kvw], s.v[:n*kvw]}, []quant.Matrix{w.mats.q, w.mats.k, w.mats.v}, in, n)
		}
		if w.bq != nil {
			for i := 0; i < n; i++ {
				addTo(s.q[i*qw:(i+1)*qw], w.bq)
				addTo(s.k[i*kvw:(i+1)*kvw], w.bk)
				addTo(s.v[i*kvw:(i+1)*kvw], w.bv)
			}
		}
		if w.qNorm != nil {
			rmsNormRows(s.q[:n*qw], w.qNormRow, w.qNorm, c.NormEps)
		}
		if w.kNorm != nil && !shared {
			rmsNormRows(s.k[:n*kvw], w.kNormRow, w.kNorm, c.NormEps)
		}
		if c.Block.VNorm && !shared {
			rmsNormRows(s.v[:n*kvw], hd, nil, c.NormEps)
		}
		if w.hasRope {
			for i := 0; i < n; i++ {
				w.rope.applyRows(s.q[i*qw:(i+1)*qw], hd, pos+i)
				if !shared {
					w.rope.applyRows(s.k[i*kvw:(i+1)*kvw], hd, pos+i)
				}
			}
		}
		if kept := s.shared[l]; kept != nil {
			copy(kept[:n*kvw], s.k[:n*kvw])
			copy(kept[len(kept)/2:], s.v[:n*kvw])
		}
		if c.ScaleQ {
			scaleAll(s.q[:n*qw], c.AttnScale)
		}
		// a layer that reads its cache in place needs the batch there
		// first; the others read the batch from the activations (see
		// attention) and store it after; a KV-shared layer stores nothing.
		// A ring that a KV-shared layer reads is written at the end of the
		// batch (storeKept): written now, the batch's keys could take the
		// slots of positions the shared layer's first queries still see.
		inPlace := b.inPlace(l)
		deferred := s.shared[l] != nil && b.kv.capacity[l] < b.opts.ContextSize
		if inPlace && !shared {
			b.storeBatch(l, n, pos)
		}
		b.attention(l, n, pos)
		if !inPlace && !shared && !deferred {
			b.storeBatch(l, n, pos)
		}
		if c.Block.AttnGate {
			b.gateAttention(n)
		}
		quant.MatMul(s.proj[:n*e], w.mats.o, s.att[:n*qw], n)
		if w.bo != nil {
			for i := 0; i < n; i++ {
				addTo(s.proj[i*e:(i+1)*e], w.bo)
			}
		}
		b.residual(s.proj[:n*e], w.postAttn, n)
		b.ffn(l, L, w, n)
		if L.PLE != nil {
			b.pleLayer(l, n)
		}
		if w.outScale != 1 {
			scaleAll(s.x[:n*e], w.outScale)
		}
	}
	b.storeKept(n, pos)
	if b.hybrid != nil {
		b.hybrid.state.pos = pos + n
	}
}

// storeKept writes the batch's keys and values of the rings forwardBatch
// left unwritten (those KV-shared layers read) from the copies kept for
// the shared layers.
func (b *Backend) storeKept(n, pos int) {
	for l, kept := range b.s.shared {
		if kept == nil || b.kv.capacity[l] >= b.opts.ContextSize {
			continue
		}
		kvw := b.m.Layers[l].Config.KVWidth()
		k, v := kept[:n*kvw], kept[len(kept)/2:len(kept)/2+n*kvw]
		for i := 0; i < n; i++ {
			b.kv.store(l, pos+i, k[i*kvw:(i+1)*kvw], v[i*kvw:(i+1)*kvw])
		}
	}
}

// ffn is a layer's FFN branch: x += PostNorm(FFN(PreNorm(x))).
func (b *Backend) ffn(l int, L *arch.Layer, w *layerState, n int) {
	c, s := &b.m.Config, &b.s
	e := c.Embd
	in := b.preNorm(s.x[:n*e], w.ffn, n)
	if L.Experts != nil {
		b.moe(l, L.Experts, w, in, s.proj[:n*e], n)
		if L.Experts.Shared != nil {
			b.sharedExpert(L.Experts.Shared, in, s.proj[:n*e], n)
		}
	} else {
		ff := L.Config.FF
		quant.MatMuls([][]float32{s.gate[:n*ff], s.up[:n*ff]}, []quant.Matrix{w.mats.gate, w.mats.up}, in, n)
		b.activate(s.gate[:n*ff], s.up[:n*ff])
		quant.MatMul(s.proj[:n*e], w.mats.down, s.gate[:n*ff], n)
	}
	b.residual(s.proj[:n*e], w.postFFN, n)
}

// storeBatch writes the batch's keys and values into layer's cache.
func (b *Backend) storeBatch(layer, n, pos int) {
	kvw := b.m.Layers[layer].Config.KVWidth()
	for i := 0; i < n; i++ {
		b.kv.store(layer, pos+i, b.s.k[i*kvw:(i+1)*kvw], b.s.v[i*kvw:(i+1)*kvw])
	}
}

// preNorm returns the branch input: rms(x)·w in s.xb, or x itself when the
// recipe has no pre-norm (OLMo 2).
func (b *Backend) preNorm(x, w []float32, n int) []float32 {
	if w == nil {
		return x
	}
	e, xb := b.m.Embd, b.s.xb
	for i := 0; i < n; i++ {
		rmsNorm(xb[i*e:(i+1)*e], x[i*e:(i+1)*e], w, b.m.NormEps)
	}
	return xb[:n*e]
}

// residual adds a branch's output to the stream, after its post-norm (when
// the recipe has one) and the residual multiplier, in llama.cpp's order.
func (b *Backend) residual(out, post []float32, n int) {
	c := &b.m.Config
	if post != nil {
		rmsNormRows(out, c.Embd, post, c.NormEps)
	}
	if c.ResidualScale != 1 {
		scaleAll(out, c.ResidualScale)
	}
	addTo(b.s.x[:n*c.Embd], out)
}

// activate writes act(gate) * up into gate.
func (b *Backend) activate(gate, up []float32) {
	if b.m.Block.Act == arch.ActSwiGLUOAI {
		for i, g := range gate {
			gate[i] = swigluOAI(g, up[i])
		}
		return
	}
	if b.m.Block.Act == arch.ActGELUTanh {
		for i, g := range gate {
			gate[i] = gelu(b.gelu, g) * up[i]
		}
		return
	}
	// element-wise, so both cores share it (quant's pool), in pieces as
	// small as a MoE token's k experts' 4 x 512 values: 5 µs on one core,
	// a serial stretch in every layer while the other core waits
	b.call.gate, b.call.up = gate, up
	quant.ParallelRange(len(gate), 512, b.call.swiglu)
}

// logits applies the final norm and output projection to batch rows
// [from, to) of s.x, writing (to-from) x vocab values into out, then the
// logit multiplier and soft-cap.
func (b *Backend) logits(out []float32, from, to int) {
	c := &b.m.Config
	e, s := c.Embd, &b.s
	for i := from; i < to; i++ {
		rmsNorm(s.xb[(i-from)*e:(i-from+1)*e], s.x[i*e:(i+1)*e], b.outNorm, c.NormEps)
	}
	out = out[:(to-from)*c.Vocab]
	quant.MatMul(out, b.output, s.xb[:(to-from)*e], to-from)
	if c.LogitScale != 1 {
		scaleAll(out, c.LogitScale)
	}
	if c.FinalSoftcap != 0 {
		softcap(out, c.FinalSoftcap)
	}
}

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
