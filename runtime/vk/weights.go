package vk

import (
	"fmt"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// weights are the model's parameters on the device, uploaded once at
// load, bound to the plan's ops (an opRef finds an op's own).
type weights struct {
	input, head []bound
	layers      [][]bound
	ple         *pleModel // per-layer embeddings (gemma4), or nil
	bytes       uint64    // everything uploaded, for Memory
	// mats are the matrices uploaded, by their data, so that a tied head
	// reads the embedding's
	mats map[*byte]*Matrix
	// all are the matrices uploaded, for Matrix.cpuOrder
	all []*Matrix
	// cpuOrder: every matrix uploaded is F32, or with exactQuant of a
	// type the exact kernel has, so the model's path rounds as the CPU
	// backend's (each Matrix.cpuOrder, and cpuAttention)
	cpuOrder bool
	// exactQuant, set before upload (tuning.cpuRounding), lets quantized
	// matrices of the types the exact kernel has (matvec_exact.go's
	// exactTypes) sum as the CPU backend's. It takes effect only where
	// every matrix can: the exact kernel is slower, and gives the CPU's
	// bits only where the products around it do too (a quantized model's
	// F32 router alone in the CPU's order moved
	// synth-granitehybrid-Q4_K_M past the 0.25).
	exactQuant bool
}

// bound is an op's weights as the kernels use them; which fields an op
// fills is its kind's.
type bound struct {
	// vec: a Norm's weight (padded to the x stride for a branch norm), a
	// Residual's post-norm, an Attention's sinks; nil without
	vec *vulkan.Buffer
	eps float32 // a Norm's
	// mats: a Products op's matrices, one per product, or Q|K|V stacked
	// into one where their types match (an Embed's table is mats[0]);
	// bias the stacked biases, biases one per matrix (nil entries
	// without); gate a gated Q's gate rows
	mats   []*Matrix
	bias   *vulkan.Buffer
	biases []*vulkan.Buffer
	gate   *Matrix
	moe    *moeWeights
	shared *sharedWeights
	dn     *dnWeights
	conv   *convWeights
	mamba  *mamba2Weights
	mla    *mlaWeights
	ple    *pleWeights
	scale  float32 // a ScaleStream's
	// hnorm: an MTPInput's norm of the hidden rows (vec is its norm of
	// the embedded tokens, mats[0] its eh_proj)
	hnorm *vulkan.Buffer
}

// at is the op ref's weights.
func (ws *weights) at(r opRef) *bound {
	switch r.sec {
	case secInput:
		return &ws.input[r.i]
	case secHead:
		return &ws.head[r.i]
	}
	return &ws.layers[r.sec][r.i]
}

// forOps calls f with every op of p and its section.
func forOps(p *plan.Plan, f func(sec int, op plan.Op)) {
	for _, op := range p.Input {
		f(secInput, op)
	}
	for _, l := range p.Layers {
		for _, op := range l.Ops {
			f(l.Index, op)
		}
	}
	for _, op := range p.Head {
		f(secHead, op)
	}
}

// upload puts p's weights on device d, bound to its ops; norms of the
// stream are padded to the activations' stride xStride.
func (ws *weights) upload(d *gpu, p *plan.Plan, xStride int) error {
	if ws.mats == nil {
		ws.mats = map[*byte]*Matrix{}
	}
	var err error
	sec := func(ops []plan.Op) []bound {
		out := make([]bound, len(ops))
		for i, op := range ops {
			if err == nil {
				err = ws.bind(d, p, xStride, op, &out[i])
			}
		}
		return out
	}
	ws.input = sec(p.Input)
	for _, l := range p.Layers {
		ws.layers = append(ws.layers, sec(l.Ops))
		if err != nil {
			return fmt.Errorf("layer %d: %w", l.Index, err)
		}
	}
	ws.head = sec(p.Head)
	if err != nil {
		return err
	}
	ws.cpuOrder = len(ws.all) > 0
	for _, m := range ws.all {
		ws.cpuOrder = ws.cpuOrder && (m.Type == ggml.F32 || ws.exactQuant && exactTypes[m.Type])
	}
	for _, m := range ws.all {
		m.cpuOrder = ws.cpuOrder
	}
	return nil
}

// uploadMatrix is d.uploadMatrix, keeping the matrix in ws.all.
func (ws *weights) uploadMatrix(d *gpu, name string, t ggml.Type, rows, cols int, data ...[]byte) (*Matrix, error) {
	m, err := d.uploadMatrix(name, t, rows, cols, data...)
	if err == nil {
		ws.all = append(ws.all, m)
	}
	return m, err
}

// matrix uploads w once (a weight read by two ops, as a tied head, is
// uploaded the first time).
func (ws *weights) matrix(d *gpu, w plan.Weight) (*Matrix, error) {
	if len(w.Data) > 0 {
		if m := ws.mats[&w.Data[0]]; m != nil && m.Rows == w.Rows && m.Type == w.Type {
			return m, nil
		}
	}
	m, err := ws.uploadMatrix(d, w.Name, w.Type, w.Rows, w.Cols, w.Data)
	if err != nil {
		return nil, err
	}
	ws.bytes += m.Bytes
	if len(w.Data) > 0 {
		ws.mats[&w.Data[0]] = m
	}
	return m, nil
}

// bind uploads op's weights into bw.
func (ws *weights) bind(d *gpu, p *plan.Plan, xStride int, op plan.Op, bw *bound) error {
	var err error
	up := func(w plan.Weight) *Matrix {
		if err != nil {
			return nil
		}
		var m *Matrix
		m, err = ws.matrix(d, w)
		return m
	}
	switch o := op.(type) {
	case plan.Embed:
		bw.mats = []*Matrix{up(o.Table)}
	case plan.PerLayerInputs:
		x := o.PLE
		ws.ple = &pleModel{width: x.Width, layers: len(p.Layers), proj: up(x.Proj), token: x.Token, eps: p.NormEps}
		if err == nil {
			ws.ple.norm, err = ws.vector(d, x.Norm, x.Width)
		}
	case plan.Norm:
		bw.eps = o.Eps
		if o.Weight != nil {
			n := o.Weight.Cols
			if o.In == plan.X {
				n = xStride
			}
			bw.vec, err = ws.vector(d, *o.Weight, n)
		}
	case plan.Products:
		return ws.bindProducts(d, p, o, bw)
	case plan.Attention:
		if o.Sinks != nil {
			bw.vec, err = ws.vector(d, *o.Sinks, o.Sinks.Cols)
		}
	case plan.MoE:
		bw.moe = &moeWeights{router: up(o.Router), down: up(o.Down)}
		switch {
		case o.FusedGateUp:
			if err == nil {
				bw.moe.gate, bw.moe.up, err = ws.splitGateUp(d, o)
			}
		default:
			bw.moe.up = up(o.Up)
			if len(o.Gate.Data) > 0 { // else ungated experts (ReLU² of up)
				bw.moe.gate = up(o.Gate)
			}
		}
		if err == nil && o.RouterBias != nil {
			bw.moe.routerBias, err = ws.vector(d, *o.RouterBias, o.RouterBias.Cols)
		}
		if err == nil && o.SelectBias != nil {
			bw.moe.selectBias, err = ws.vector(d, *o.SelectBias, o.SelectBias.Cols)
		}
		if err == nil {
			err = ws.uploadExpertBiases(d, &o, bw.moe)
		}
		if err == nil && o.RouterIn != nil {
			bw.moe.routerIn, err = ws.routerInput(d, o.RouterIn, xStride)
		}
		if err == nil && o.DownScale != nil {
			if o.DownScale.Rows*o.DownScale.Cols != o.Experts {
				return fmt.Errorf("tensor %q: %d×%d scales for %d experts", o.DownScale.Name, o.DownScale.Rows, o.DownScale.Cols, o.Experts)
			}
			bw.moe.downScale, err = ws.vector(d, *o.DownScale, o.Experts)
		}
		if err == nil && o.PostNorm != nil {
			bw.moe.postNorm, err = ws.vector(d, *o.PostNorm, o.PostNorm.Cols)
		}
	case plan.SharedExpert:
		bw.shared = &sharedWeights{up: up(o.Up), down: up(o.Down)}
		if len(o.Gate.Data) > 0 { // else ungated (ReLU² of up)
			bw.shared.gate = up(o.Gate)
		}
		if len(o.Scale.Data) > 0 { // else no σ gate
			bw.shared.scale = up(o.Scale)
		}
	case plan.DeltaNet:
		bw.dn, err = ws.uploadDeltaNet(d, up, o.W)
	case plan.ShortConv:
		bw.conv, err = ws.uploadConv(d, o.W, up)
	case plan.Mamba2:
		bw.mamba, err = ws.uploadMamba2(d, up, &o.Shape, o.W)
		if err == nil {
			// summed as the CPU backend's in vec_dot's lanes (Matrix.vecDot)
			for _, m := range []*Matrix{bw.mamba.in, bw.mamba.out} {
				if m != nil {
					m.vecDot = true
				}
			}
		}
	case plan.MLA:
		var mw *mlaWeights
		if mw, err = ws.uploadMLA(d, up, o); err == nil {
			bw.mla = mw
		}
	case plan.Residual:
		if o.PostNorm != nil {
			bw.vec, err = ws.vector(d, *o.PostNorm, o.PostNorm.Cols)
		}
	case plan.PerLayerEmbedding:
		bw.ple = &pleWeights{gate: up(o.W.Gate), proj: up(o.W.Proj)}
		if err == nil {
			bw.ple.norm, err = ws.vector(d, o.W.Norm, xStride)
		}
	case plan.MTPInput:
		bw.eps = o.Eps
		bw.mats = []*Matrix{up(o.EHProj)}
		if err == nil {
			bw.vec, err = ws.vector(d, o.ENorm, xStride)
		}
		if err == nil {
			bw.hnorm, err = ws.vector(d, o.HNorm, xStride)
		}
	case plan.ScaleStream:
		v := make([]float32, 1)
		if err := quant.Dequantize(o.W.Type, o.W.Data, v); err != nil {
			return fmt.Errorf("tensor %q: %w", o.W.Name, err)
		}
		bw.scale = v[0]
	}
	return err
}

// bindProducts uploads a Products op's matrices: a Q|K|V product's three
// stacked into one where their types match (a gated Q split into its Q
// and gate rows first), and the biases, stacked the same way.
func (ws *weights) bindProducts(d *gpu, p *plan.Plan, o plan.Products, bw *bound) error {
	ws2 := make([]plan.Weight, len(o.Outs))
	for i, pd := range o.Outs {
		ws2[i] = pd.W
		if pd.GatedHeads {
			var gate plan.Weight
			ws2[i], gate = splitGatedQ(pd.W, p.Heads, pd.HeadDim)
			m, err := ws.matrix(d, gate)
			if err != nil {
				return err
			}
			bw.gate = m
		}
	}
	stack := len(o.Outs) == 3 && o.Outs[0].Out == plan.Q
	for _, w := range ws2[1:] {
		stack = stack && w.Type == ws2[0].Type
	}
	if stack {
		rows := ws2[0].Rows + ws2[1].Rows + ws2[2].Rows
		m, err := ws.uploadMatrix(d, strings.Replace(ws2[0].Name, "attn_q", "attn_qkv", 1)+" (stacked)", ws2[0].Type, rows, ws2[0].Cols, ws2[0].Data, ws2[1].Data, ws2[2].Data)
		if err != nil {
			return err
		}
		ws.bytes += m.Bytes
		bw.mats = []*Matrix{m}
	} else {
		for _, w := range ws2 {
			m, err := ws.matrix(d, w)
			if err != nil {
				return err
			}
			bw.mats = append(bw.mats, m)
		}
	}
	has := false
	for _, pd := range o.Outs {
		has = has || pd.Bias != nil
	}
	if !has {
		return nil
	}
	// per product (zeros where one has none), unless the product is one
	var all []float32
	if len(bw.mats) > 1 || o.Outs[0].Out != plan.Q {
		bw.biases = make([]*vulkan.Buffer, len(o.Outs))
	}
	for i, pd := range o.Outs {
		v := make([]float32, ws2[i].Rows)
		name := ws2[i].Name + ".bias (zeros)"
		if pd.Bias != nil {
			if pd.Bias.Cols != len(v) {
				return fmt.Errorf("tensor %q: %d biases for %d rows", pd.Bias.Name, pd.Bias.Cols, len(v))
			}
			if err := quant.Dequantize(pd.Bias.Type, pd.Bias.Data, v); err != nil {
				return fmt.Errorf("tensor %q: %w", pd.Bias.Name, err)
			}
			name = pd.Bias.Name
		}
		if bw.biases != nil {
			var err error
			if bw.biases[i], err = ws.floats(d, name, v, len(v)); err != nil {
				return err
			}
		}
		all = append(all, v...)
	}
	if o.Outs[0].Out == plan.Q {
		// the Q|K|V product's epilogue adds them (epiBias), stacked as its rows
		var err error
		bw.bias, err = ws.floats(d, strings.Replace(ws2[0].Name, "attn_q", "attn_qkv", 1)+".bias", all, len(all))
		return err
	}
	return nil
}

// splitGateUp uploads a fused gate|up bank (each expert's FF gate rows,
// then its FF up rows) as the two banks the paired expert kernel reads:
// rows are whole blocks in every type, so each expert's runs are slices
// of the file's data, uploaded without a copy.
func (ws *weights) splitGateUp(d *gpu, o plan.MoE) (gate, up *Matrix, err error) {
	var gs, us [][]byte
	rows := 0
	for e := 0; e < o.Experts; e++ {
		g, u, _ := o.Expert(e)
		if g.Rows != o.FF || u.Rows != o.FF {
			return nil, nil, fmt.Errorf("tensor %q: expert %d has %d gate and %d up rows, want %d", o.Gate.Name, e, g.Rows, u.Rows, o.FF)
		}
		gs, us = append(gs, g.Data), append(us, u.Data)
		rows += o.FF
	}
	if gate, err = ws.uploadMatrix(d, o.Gate.Name+" (gate rows)", o.Gate.Type, rows, o.Gate.Cols, gs...); err != nil {
		return nil, nil, err
	}
	ws.bytes += gate.Bytes
	if up, err = ws.uploadMatrix(d, o.Gate.Name+" (up rows)", o.Gate.Type, rows, o.Gate.Cols, us...); err != nil {
		return nil, nil, err
	}
	ws.bytes += up.Bytes
	return gate, up, nil
}

// routerInput uploads the router's own norm weight with its scale folded
// in (Scale ⊙ Weight, padded to the x stride), which the router's mat-vec
// applies after the RMS norm of the stream as any branch norm's. llama.cpp
// rounds × Scale and ⊙ Weight one after the other; folded, a product
// differs from theirs by an ulp at most, and not at all where Scale is a
// power of two (1/√embd for an embd of 4^k).
func (ws *weights) routerInput(d *gpu, ri *plan.RouterInput, xStride int) (*vulkan.Buffer, error) {
	w := ri.Weight
	if w.Type != ggml.F32 {
		return nil, fmt.Errorf("tensor %q: vectors must be F32, found %s", w.Name, w.Type)
	}
	v := make([]float32, w.Cols)
	if err := quant.Dequantize(w.Type, w.Data, v); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", w.Name, err)
	}
	for i := range v {
		v[i] *= ri.Scale
	}
	return ws.floats(d, w.Name+" × scale", v, xStride)
}

// uploadExpertBiases uploads layer i's per-expert gate, up and down biases
// ([experts][rows] each, F32), which the expert mat-vecs add by the pair's
// expert id. Gate and up are added by one paired kernel, which reads both
// or neither: a model with only one of them gets zeros for the other.
func (ws *weights) uploadExpertBiases(d *gpu, x *plan.MoE, mw *moeWeights) error {
	whole := func(w *plan.Weight) ([]float32, error) {
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
	up := func(w *plan.Weight, rows int, name string) *vulkan.Buffer {
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
		mw.gateBias = up(x.GateBias, x.Gate.Rows, x.Gate.Name+".bias (zeros)")
		mw.upBias = up(x.UpBias, x.Up.Rows, x.Up.Name+".bias (zeros)")
	}
	if x.DownBias != nil {
		mw.downBias = up(x.DownBias, x.Down.Rows, "")
	}
	return err
}

// vector uploads an F32 vector zero-padded to n floats.
func (ws *weights) vector(d *gpu, w plan.Weight, n int) (*vulkan.Buffer, error) {
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

// biasAt is product i's bias, nil without.
func (bw *bound) biasAt(i int) *vulkan.Buffer {
	if i < len(bw.biases) {
		return bw.biases[i]
	}
	return nil
}
