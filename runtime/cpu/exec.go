package cpu

import (
	"fmt"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// The CPU backend executes a model's plan (runtime/plan): compile binds
// each op once to this backend's buffers, decoded vectors and bound
// matrices, as a step; a forward pass runs the steps in order. There is one
// compile function per op kind and no other place where the forward pass
// learns what the model does.

// pass is what one run of the steps works on: a batch of n tokens at
// positions pos.., or for the head, rows [from, from+n) of the stream
// with their logits going to logits.
type pass struct {
	tokens []int32
	n, pos int
	from   int
	logits []float32
	// hidden is an MTP head's second input, a row per token (mtp.go)
	hidden []float32
}

// step is one op bound to this backend.
type step func(r *pass)

// program is a plan compiled: the input steps, each layer's, the head's.
type program struct {
	input  []step
	layers [][]step
	head   []step
}

// compile binds p to b.
func (b *Backend) compile(p *plan.Plan) (program, error) {
	var prog program
	var err error
	b.ropes = make([]*ropeTable, len(p.Rotations))
	b.layers = make([]layerState, len(p.Layers))
	for i := range b.layers {
		b.layers[i].kvLayer = i
	}
	if prog.input, err = b.steps(-1, p.Input, p); err != nil {
		return prog, err
	}
	b.timed("input: ", p.Input, prog.input)
	for _, l := range p.Layers {
		st, err := b.steps(l.Index, l.Ops, p)
		if err != nil {
			return prog, fmt.Errorf("cpu backend: layer %d: %w", l.Index, err)
		}
		b.timed("", l.Ops, st)
		prog.layers = append(prog.layers, st)
	}
	if err := checkHiddenNorm(p); err != nil {
		return prog, err
	}
	if prog.head, err = b.steps(-1, p.Head, p); err != nil {
		return prog, err
	}
	b.timed("head: ", p.Head, prog.head)
	b.embedding = untiedEmbedding(p)
	return prog, nil
}

func (b *Backend) steps(layer int, ops []plan.Op, p *plan.Plan) ([]step, error) {
	var out []step
	for _, op := range ops {
		var s step
		switch o := op.(type) {
		case plan.Embed:
			s = b.embedStep(o)
		case plan.PerLayerInputs:
			b.useGELU()
			b.pleNorm = vectorF32(o.PLE.Norm)
			s = func(r *pass) { b.pleInputs(o.PLE, r.tokens) }
		case plan.Norm:
			s = b.normStep(o)
		case plan.Products:
			s = b.productsStep(o)
		case plan.Rope:
			s = b.ropeStep(o, p.Rotations[o.Table])
		case plan.Scale:
			s = func(r *pass) { scaleAll(b.buf(o.Buf, r)[:r.n*o.Width], o.By) }
		case plan.PositionScale:
			s = func(r *pass) {
				x := b.buf(o.Buf, r)
				for i := 0; i < r.n; i++ {
					scaleAll(x[i*o.Width:(i+1)*o.Width], o.T.At(r.pos+i))
				}
			}
		case plan.Softcap:
			s = func(r *pass) { softcapShared(b.buf(o.Buf, r)[:r.n*o.Width], o.Cap) }
		case plan.Attention:
			l := &b.layers[layer]
			l.att, l.kvLayer, l.sinks = o, p.Cache[o.Cache].Layer, optVector(o.Sinks)
			s = b.attentionStep(layer, o)
		case plan.MLA:
			s = b.mlaStep(layer, o)
		case plan.AttnGate:
			s = func(r *pass) { b.gateAttention(r.n) }
		case plan.GLU:
			if o.Act == plan.ActGELUTanh {
				b.useGELU()
			}
			s = func(r *pass) { b.activate(o.Act, b.s.gate[:r.n*o.Width], b.s.up[:r.n*o.Width]) }
		case plan.MoE:
			if o.Act == plan.ActGELUTanh {
				b.useGELU()
			}
			w := &b.layers[layer]
			w.router, w.routerBias, w.selectBias = quant.Bind(matrix(o.Router)), optVector(o.RouterBias), optVector(o.SelectBias)
			w.gateBias, w.upBias, w.downBias = optRows(o.GateBias), optRows(o.UpBias), optRows(o.DownBias)
			w.downScale, w.moePost = optVector(o.DownScale), optVector(o.PostNorm)
			if o.RouterIn != nil {
				w.routerScale = vectorF32(o.RouterIn.Weight)
			}
			s = func(r *pass) {
				var from []float32
				if o.RouterIn != nil {
					from = b.rows(o.RouterIn.From, r)
				}
				b.moe(layer, &o, w, b.rows(o.In, r), from, b.rows(o.Out, r), r.n)
			}
		case plan.SharedExpert:
			s = func(r *pass) { b.sharedExpert(&o, b.rows(o.In, r), b.rows(o.Out, r), r.n) }
		case plan.DeltaNet:
			s = func(r *pass) { b.deltaNet(layer, o.W, b.rows(o.In, r), r.n) }
		case plan.Mamba2:
			b.mamba.bind(layer, o.W)
			s = func(r *pass) { b.mamba2(layer, &o, b.rows(o.In, r), r.n) }
		case plan.ShortConv:
			b.layers[layer].convTaps = optRows(&o.W.Conv)
			s = func(r *pass) { b.shortConv(layer, &o, b.rows(o.In, r), r.n) }
		case plan.Residual:
			post := optVector(o.PostNorm)
			s = func(r *pass) { b.residual(b.rows(o.Branch, r), post, o.Eps, o.Scale, r.n) }
		case plan.PerLayerEmbedding:
			b.layers[layer].pleNorm = vectorF32(o.W.Norm)
			s = func(r *pass) { b.pleLayer(&o, r.n) }
		case plan.MTPInput:
			s = b.mtpInputStep(o)
		case plan.ScaleStream:
			by := vectorF32(o.W)[0]
			s = func(r *pass) { scaleAll(b.s.x[:r.n*b.plan.Embd], by) }
		default:
			return nil, fmt.Errorf("op %T has no CPU step", op)
		}
		out = append(out, s)
	}
	return out, nil
}

// useGELU makes llama.cpp's F16 GELU table, which the GELU activation and
// the per-layer embeddings read.
func (b *Backend) useGELU() {
	if b.gelu == nil {
		b.gelu = geluTable()
	}
}

// buf is a plan buffer of this pass: the stream from the pass's first row.
func (b *Backend) buf(k plan.Buf, r *pass) []float32 {
	s := &b.s
	switch k {
	case plan.X:
		return s.x[r.from*b.plan.Embd:]
	case plan.In:
		return s.xb
	case plan.Q:
		return s.q
	case plan.K:
		return s.k
	case plan.V:
		return s.v
	case plan.Gate:
		return s.gate
	case plan.Up:
		return s.up
	case plan.Attn:
		return s.att
	case plan.Out:
		return s.proj
	case plan.Logits:
		return r.logits
	}
	panic(fmt.Sprintf("cpu backend: plan buffer %v", k))
}

// rows is an embd-wide buffer's rows of this pass.
func (b *Backend) rows(k plan.Buf, r *pass) []float32 { return b.buf(k, r)[:r.n*b.plan.Embd] }

// untiedEmbedding is the plan's token embedding when the head does not
// multiply by it too (then a decode step reads one row of it); nil when
// it is tied.
func untiedEmbedding(p *plan.Plan) *plan.Weight {
	var emb, out *plan.Weight
	for _, op := range p.Input {
		if o, ok := op.(plan.Embed); ok {
			emb = &o.Table
		}
	}
	for _, op := range p.Head {
		if o, ok := op.(plan.Products); ok {
			out = &o.Outs[0].W
		}
	}
	if emb == nil || len(emb.Data) == 0 || (out != nil && len(out.Data) > 0 && &out.Data[0] == &emb.Data[0]) {
		return nil
	}
	return emb
}

// embedStep gathers the tokens' rows of the table, then the scale.
func (b *Backend) embedStep(o plan.Embed) step {
	emb := matrix(o.Table)
	rowBytes := len(emb.Data) / emb.Rows
	e := o.Table.Cols
	return func(r *pass) {
		x := b.s.x
		for i, t := range r.tokens {
			_ = quant.Dequantize(emb.Type, emb.Data[int(t)*rowBytes:(int(t)+1)*rowBytes], x[i*e:(i+1)*e])
		}
		if o.Scale != 1 {
			scaleAll(x[:r.n*e], o.Scale)
		}
	}
}

// normStep: an in-place norm normalizes each row where it is; a branch
// norm writes each token's normed row to the other buffer.
func (b *Backend) normStep(o plan.Norm) step {
	w := optVector(o.Weight)
	if o.In == o.Out {
		return func(r *pass) { rmsNormRows(b.buf(o.In, r)[:r.n*o.Width], o.Row, w, o.Eps) }
	}
	return func(r *pass) {
		in, out := b.buf(o.In, r), b.buf(o.Out, r)
		for i := 0; i < r.n*o.Width; i += o.Row {
			rmsNorm(out[i:i+o.Row], in[i:i+o.Row], w, o.Eps)
		}
	}
}

// productsStep runs products sharing an input as one job (the input
// converted once, the workers handed out once), then adds the biases.
// A gated-heads product (qwen35's Q) is split into Q and the gate.
func (b *Backend) productsStep(o plan.Products) step {
	var outs []plan.Buf
	var mats []quant.Matrix
	var widths []int
	type bias struct {
		out   plan.Buf
		width int
		v     []float32
	}
	var biases []bias
	var gated *quant.Matrix
	var gatedHD int
	for _, pd := range o.Outs {
		m := quant.Bind(matrix(pd.W))
		if pd.GatedHeads {
			gated, gatedHD = &m, pd.HeadDim
			continue
		}
		outs, mats, widths = append(outs, pd.Out), append(mats, m), append(widths, pd.W.Rows)
		if pd.Bias != nil {
			biases = append(biases, bias{pd.Out, pd.W.Rows, vectorF32(*pd.Bias)})
		}
	}
	inWidth := o.Outs[0].W.Cols
	dsts := make([][]float32, len(outs))
	return func(r *pass) {
		n := r.n
		in := b.buf(o.In, r)[:n*inWidth]
		if gated != nil {
			b.gatedQ(*gated, gatedHD, in, n)
		}
		for i, k := range outs {
			dsts[i] = b.buf(k, r)[:n*widths[i]]
		}
		switch len(mats) {
		case 0:
		case 1:
			quant.MatMul(dsts[0], mats[0], in, n)
		default:
			quant.MatMuls(dsts, mats, in, n)
		}
		for _, bs := range biases {
			out := b.buf(bs.out, r)
			for i := 0; i < n; i++ {
				addTo(out[i*bs.width:(i+1)*bs.width], bs.v)
			}
		}
	}
}

// ropeStep rotates each buffer's heads at each token's position, with the
// table the layers rotating alike share (one per plan rotation, so that a
// position's angles are computed once per token, not once per layer).
func (b *Backend) ropeStep(o plan.Rope, rot plan.Rotation) step {
	if b.ropes[o.Table] == nil {
		b.ropes[o.Table] = ropeFrom(rot)
	}
	t := b.ropes[o.Table]
	return func(r *pass) {
		for i := 0; i < r.n; i++ {
			for j, k := range o.Bufs {
				w := o.Widths[j]
				t.applyRows(b.buf(k, r)[i*w:(i+1)*w], o.HeadDim, r.pos+i)
			}
		}
	}
}

// attentionStep is a layer's attention with its cache traffic. A layer
// that reads its cache in place needs the batch there first; the others
// read the batch from the activations and store it after; a KV-shared
// layer takes the batch's keys and values its source kept and stores
// nothing. A ring that a KV-shared layer reads is written at the end of
// the batch (storeKept): written now, the batch's keys could take the
// slots of positions the shared layer's first queries still see.
func (b *Backend) attentionStep(layer int, o plan.Attention) step {
	kvw, qw := o.KVHeads*o.HeadDim, o.Heads*o.HeadDim
	src := b.layers[layer].kvLayer
	return func(r *pass) {
		n, pos, s := r.n, r.pos, &b.s
		// a quantized cache's rotations (rotate.go), before a KV-shared
		// layer's source keeps its rows: the cache holds them rotated
		if b.rot.k > 0 {
			hadamard(s.q[:n*qw], b.rot.k)
			if !o.Shared {
				hadamard(s.k[:n*kvw], b.rot.k)
			}
		}
		if b.rot.v > 0 && !o.Shared {
			hadamard(s.v[:n*kvw], b.rot.v)
		}
		if o.Shared {
			kept := s.shared[src]
			copy(s.k[:n*kvw], kept[:n*kvw])
			copy(s.v[:n*kvw], kept[len(kept)/2:len(kept)/2+n*kvw])
		} else if kept := s.shared[layer]; kept != nil {
			copy(kept[:n*kvw], s.k[:n*kvw])
			copy(kept[len(kept)/2:], s.v[:n*kvw])
		}
		inPlace := b.inPlace(layer)
		deferred := s.shared[layer] != nil && b.kv.capacity[layer] < b.opts.ContextSize
		if inPlace && !o.Shared {
			b.storeBatch(layer, n, pos)
		}
		b.attention(layer, n, pos)
		if !inPlace && !o.Shared && !deferred {
			b.storeBatch(layer, n, pos)
		}
		if b.rot.v > 0 {
			hadamard(s.att[:n*qw], b.rot.v) // back from the rotated values
		}
	}
}
