package vk

import (
	"fmt"

	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// weights are the model's parameters on the device, uploaded once at
// load: the embeddings, each block's weights, the output norm and head.
type weights struct {
	tokEmbd, output *Matrix
	outNorm         *vulkan.Buffer
	layers          []*layerWeights
	ple             *pleModel // per-layer embeddings (gemma4), or nil
	bytes           uint64    // everything uploaded, for Memory
}

// layerWeights are one block's weights as the kernels use them. Matrices of
// one type that read the same input are stacked so one dispatch computes
// them: Q|K|V, and gate with up (paired) when their types match.
type layerWeights struct {
	qkv        *Matrix          // nil when Q, K and V differ in type
	q, k, v    *Matrix          // used when qkv is nil
	bias       *vulkan.Buffer   // Q|K|V biases (Qwen2), or nil
	biases     []*vulkan.Buffer // the same split, when q, k and v are separate
	wo         *Matrix          //
	bo         *vulkan.Buffer   // attn_output bias (gpt-oss), added before the residual, or nil
	sinks      *vulkan.Buffer   // attention sink logit per query head (gpt-oss), or nil
	gate, up   *Matrix          // paired when types match; nil with experts
	down       *Matrix          //
	moe        *moeWeights      // the routed experts in place of gate/up/down, or nil
	dn         *dnWeights       // a Gated DeltaNet layer's mixer in place of attention (deltanet.go), or nil
	qGate      *Matrix          // gated attention: the gate rows of attn_q (deltanet.go), or nil
	shared     *sharedWeights   // the shared expert beside the routed ones, or nil
	conv       *convWeights     // a short-convolution layer's mixer in place of the attention weights, or nil
	attnNorm   *vulkan.Buffer   // padded with zeros to the x stride; nil without pre-norms
	ffnNorm    *vulkan.Buffer   //
	qNorm      *vulkan.Buffer   // Q/K norms ([head_dim] or the full width), or nil
	kNorm      *vulkan.Buffer   //
	postAttn   *vulkan.Buffer   // post-attention and post-FFN norms, or nil
	postFFN    *vulkan.Buffer   //
	outScale   float32          // layer_output_scale (gemma4), 0 without
	ple        *pleWeights      // per-layer embedding weights (gemma4), or nil
	matrices   []*Matrix        // everything above, for accounting
	vectorSize uint64
}

// upload puts m's weights on device d; norms are padded to the
// activations' stride xStride, and each layer is checked against its plan.
func (ws *weights) upload(d *gpu, m *arch.Model, xStride int, plans []layerPlan) error {
	c := &m.Config
	var err error
	up := func(w arch.Weight) *Matrix {
		if err != nil {
			return nil
		}
		var mat *Matrix
		mat, err = d.uploadMatrix(w.Name, w.Type, w.Rows, w.Cols, w.Data)
		if mat != nil {
			ws.bytes += mat.Bytes
		}
		return mat
	}
	ws.tokEmbd = up(m.TokenEmbd)
	if m.Tied {
		ws.output = ws.tokEmbd
	} else {
		ws.output = up(m.Output)
	}
	if err != nil {
		return err
	}
	if ws.outNorm, err = ws.vector(d, m.OutputNorm, xStride); err != nil {
		return err
	}
	for i := range m.Layers {
		L := &m.Layers[i]
		lw := &layerWeights{}
		wq := L.Wq
		if c.Block.AttnGate && L.DeltaNet == nil && L.ShortConv == nil {
			var gate arch.Weight
			wq, gate = splitGatedQ(L.Wq, c.Heads, c.HeadDim)
			lw.qGate = up(gate)
		}
		switch {
		case L.ShortConv != nil:
			if err == nil {
				lw.conv, err = ws.uploadConv(d, L.ShortConv, up)
			}
		case L.DeltaNet != nil:
			if err == nil {
				lw.dn, err = ws.uploadDeltaNet(d, up, L.DeltaNet)
			}
		case L.Config.SharesKV(i):
			lw.q = up(wq) // Q only: K and V are another layer's cache
		case wq.Type == L.Wk.Type && wq.Type == L.Wv.Type:
			rows := wq.Rows + L.Wk.Rows + L.Wv.Rows
			lw.qkv, err = d.uploadMatrix(fmt.Sprintf("blk.%d.attn_qkv (stacked)", i), wq.Type, rows, wq.Cols, wq.Data, L.Wk.Data, L.Wv.Data)
			if lw.qkv != nil {
				ws.bytes += lw.qkv.Bytes
			}
		default:
			lw.q, lw.k, lw.v = up(wq), up(L.Wk), up(L.Wv)
		}
		if L.DeltaNet == nil && L.ShortConv == nil {
			lw.wo = up(L.Wo)
		}
		if x := L.Experts; x != nil {
			lw.moe = &moeWeights{router: up(x.Router), gate: up(x.Gate), up: up(x.Up), down: up(x.Down)}
			if err == nil && x.RouterBias != nil {
				lw.moe.routerBias, err = ws.vector(d, *x.RouterBias, x.RouterBias.Cols)
			}
			if err == nil {
				err = ws.uploadExpertBiases(d, i, x, lw.moe)
			}
			if sh := x.Shared; sh != nil {
				lw.shared = &sharedWeights{gate: up(sh.Gate), up: up(sh.Up), down: up(sh.Down), scale: up(sh.Scale)}
			}
		} else {
			lw.gate, lw.up, lw.down = up(L.Gate), up(L.Up), up(L.Down)
		}
		if err != nil {
			return err
		}
		if L.AttnNorm.Data != nil {
			if lw.attnNorm, err = ws.vector(d, L.AttnNorm, xStride); err != nil {
				return err
			}
		}
		if L.FFNNorm.Data != nil {
			if lw.ffnNorm, err = ws.vector(d, L.FFNNorm, xStride); err != nil {
				return err
			}
		}
		for _, v := range []struct {
			w   *arch.Weight
			dst **vulkan.Buffer
		}{{L.QNorm, &lw.qNorm}, {L.KNorm, &lw.kNorm}, {L.PostAttnNorm, &lw.postAttn}, {L.PostFFNNorm, &lw.postFFN}} {
			if v.w == nil {
				continue
			}
			if *v.dst, err = ws.vector(d, *v.w, v.w.Cols); err != nil {
				return err
			}
		}
		if L.Bo != nil {
			if lw.bo, err = ws.vector(d, *L.Bo, L.Bo.Cols); err != nil {
				return err
			}
		}
		if L.Sinks != nil {
			if L.Sinks.Cols != c.Heads {
				return fmt.Errorf("tensor %q: %d sinks for %d heads", L.Sinks.Name, L.Sinks.Cols, c.Heads)
			}
			if lw.sinks, err = ws.vector(d, *L.Sinks, L.Sinks.Cols); err != nil {
				return err
			}
		}
		if err := ws.checkLayer(m, plans, i, lw); err != nil {
			return err
		}
		if err := ws.uploadLayerExtras(d, m, xStride, i, L, lw, up); err != nil {
			return err
		}
		if L.Bq != nil {
			var bias []float32
			for _, w := range []*arch.Weight{L.Bq, L.Bk, L.Bv} {
				v := make([]float32, w.Cols)
				if err := quant.Dequantize(w.Type, w.Data, v); err != nil {
					return fmt.Errorf("tensor %q: %w", w.Name, err)
				}
				bias = append(bias, v...)
			}
			if lw.bias, err = ws.floats(d, fmt.Sprintf("blk.%d.attn_qkv.bias", i), bias, len(bias)); err != nil {
				return err
			}
			if lw.qkv == nil {
				off := 0
				for _, w := range []*arch.Weight{L.Bq, L.Bk, L.Bv} {
					bb, err := ws.floats(d, w.Name, bias[off:off+w.Cols], w.Cols)
					if err != nil {
						return err
					}
					lw.biases = append(lw.biases, bb)
					off += w.Cols
				}
			}
		}
		ws.layers = append(ws.layers, lw)
	}
	return nil
}

// uploadExpertBiases uploads layer i's per-expert gate, up and down biases
// ([experts][rows] each, F32), which the expert mat-vecs add by the pair's
// expert id. Gate and up are added by one paired kernel, which reads both
// or neither: a model with only one of them gets zeros for the other.
func (ws *weights) uploadExpertBiases(d *gpu, i int, x *arch.Experts, mw *moeWeights) error {
	whole := func(w *arch.Weight) ([]float32, error) {
		if w.Type != ggml.F32 {
			return nil, fmt.Errorf("tensor %q: expert biases must be F32, found %s", w.Name, w.Type)
		}
		v := make([]float32, w.Rows*w.Cols)
		if err := quant.Dequantize(w.Type, w.Data, v); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", w.Name, err)
		}
		return v, nil
	}
	var err error
	up := func(w *arch.Weight, rows int, name string) *vulkan.Buffer {
		if err != nil {
			return nil
		}
		var v []float32
		if w == nil {
			v = make([]float32, rows)
		} else {
			if w.Rows*w.Cols != rows {
				err = fmt.Errorf("tensor %q: %d×%d biases, the bank has %d rows", w.Name, w.Rows, w.Cols, rows)
				return nil
			}
			if v, err = whole(w); err != nil {
				return nil
			}
			name = w.Name
		}
		var buf *vulkan.Buffer
		buf, err = ws.floats(d, name, v, len(v))
		return buf
	}
	if x.GateBias != nil || x.UpBias != nil {
		mw.gateBias = up(x.GateBias, x.Gate.Rows, fmt.Sprintf("blk.%d.ffn_gate_exps.bias (zeros)", i))
		mw.upBias = up(x.UpBias, x.Up.Rows, fmt.Sprintf("blk.%d.ffn_up_exps.bias (zeros)", i))
	}
	if x.DownBias != nil {
		mw.downBias = up(x.DownBias, x.Down.Rows, "")
	}
	return err
}

// vector uploads an F32 vector zero-padded to n floats.
func (ws *weights) vector(d *gpu, w arch.Weight, n int) (*vulkan.Buffer, error) {
	if w.Type != ggml.F32 {
		return nil, fmt.Errorf("tensor %q: vectors must be F32, found %s", w.Name, w.Type)
	}
	v := make([]float32, w.Cols)
	if err := quant.Dequantize(w.Type, w.Data, v); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", w.Name, err)
	}
	return ws.floats(d, w.Name, v, n)
}

func (ws *weights) floats(d *gpu, name string, v []float32, n int) (*vulkan.Buffer, error) {
	data := make([]float32, max(n, len(v)))
	copy(data, v)
	buf, err := d.NewBuffer(name, uint64(4*len(data)), vulkan.MemDevice)
	if err != nil {
		return nil, err
	}
	if err := buf.Write(0, f32le(data)); err != nil {
		return nil, err
	}
	ws.bytes += buf.Size
	return buf, nil
}

// checkLayer makes sure the recipe's optional weights are there, so a
// model assembled inconsistently fails at load, naming what is missing,
// rather than reading a dummy binding.
func (ws *weights) checkLayer(m *arch.Model, plans []layerPlan, i int, lw *layerWeights) error {
	c := &m.Config
	missing := func(what string) error {
		return fmt.Errorf("layer %d: the block recipe needs %s, which the model does not have", i, what)
	}
	switch {
	case c.Block.PreNorm && (lw.attnNorm == nil || lw.ffnNorm == nil):
		return missing("attn_norm and ffn_norm")
	case c.Block.PostNorm && (lw.postAttn == nil || lw.postFFN == nil):
		return missing("post_attention_norm and post_ffw_norm")
	case c.Block.QKNorm != arch.QKNormNone && lw.dn == nil && lw.conv == nil && (lw.qNorm == nil || (lw.kNorm == nil && !m.Layers[i].Config.SharesKV(i))):
		return missing("attn_q_norm and attn_k_norm")
	case i > 0 && (lw.sinks == nil) != (ws.layers[0].sinks == nil):
		// one attention pipeline serves every layer, with sinks or without
		return fmt.Errorf("layer %d: attention sinks on some layers only", i)
	}
	if c.Block.QKNorm != arch.QKNormNone && lw.dn == nil && lw.conv == nil {
		pl := plans[i]
		wq, wk := pl.headDim, pl.headDim
		if c.Block.QKNorm == arch.QKNormFull {
			wq, wk = c.Heads*pl.headDim, pl.kvHeads*pl.headDim
		}
		L := &m.Layers[i]
		if pl.shared(i) {
			wk = 0 // no K of its own
		}
		kn := 0
		if L.KNorm != nil {
			kn = L.KNorm.Cols
		}
		if L.QNorm.Cols != wq || kn != wk {
			return fmt.Errorf("layer %d: Q/K norms of %d and %d values, the recipe needs %d and %d", i, L.QNorm.Cols, kn, wq, wk)
		}
	}
	return nil
}
