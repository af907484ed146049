package cpu

import (
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// Gated DeltaNet layers (qwen35) and the gated attention of their
// full-attention neighbours, in llama.cpp's float order (models/qwen35.cpp
// and ggml-cpu's fused gated_delta_net, which runs the recurrence token by
// token for prefill as for decode).

// hybrid is the scratch and recurrent state of a model with DeltaNet
// layers; nil for other models.
type hybrid struct {
	cfg plan.DeltaNetShape
	// per layer (nil for attention layers): the conv state, the last
	// ConvKernel−1 inputs oldest first [(K−1) x Channels], and the
	// delta-rule matrices, one per value head stored transposed
	// (row j = value dim j: M[j][i] = S[i][j]) [H_v x S x S]
	conv, mat [][]float32
	// per DeltaNet layer, vectors decoded once
	dt, a, norm [][]float32
	// convW[l] is ssm_conv1d as float32, channel-major [Channels x K]
	convW [][]float32
	state recurrentState

	// batch scratch
	qkv, z, beta, alpha []float32 // projections [n x ...]
	conved              []float32 // the conv outputs, q and k L2-normed [n x Channels]
	o                   []float32 // the heads' outputs [n x H_v·S]

	// the value heads' recurrence as the pool's range function, made
	// once, and the arguments of the call in progress
	headsFn func(lo, hi int)
	call    headsCall
}

// newHybrid lays out the plan's state slots, each at its layer (nil for
// the others), and the DeltaNet layers' batch scratch (a gated Q's is
// gatedScratch, a shared expert's the MoE scratch).
func newHybrid(p *plan.Plan, n int) *hybrid {
	if len(p.State) == 0 {
		return nil
	}
	d := p.DeltaNetShape
	l := len(p.Layers)
	h := &hybrid{cfg: d, conv: make([][]float32, l), mat: make([][]float32, l),
		dt: make([][]float32, l), a: make([][]float32, l), norm: make([][]float32, l), convW: make([][]float32, l)}
	for _, slot := range p.State {
		h.conv[slot.Layer] = make([]float32, slot.ConvFloats)
		if slot.MatrixFloats > 0 {
			h.mat[slot.Layer] = make([]float32, slot.MatrixFloats)
		}
	}
	for _, layer := range p.Layers {
		for _, op := range layer.Ops {
			if o, ok := op.(plan.DeltaNet); ok {
				i, x := layer.Index, o.W
				h.dt[i], h.a[i], h.norm[i] = vectorF32(x.DtBias), vectorF32(x.A), vectorF32(x.Norm)
				h.convW[i] = optRows(&x.Conv)
			}
		}
	}
	vw := d.ValueHeads * d.StateSize
	h.qkv, h.z = make([]float32, n*d.Channels()), make([]float32, n*vw)
	h.beta, h.alpha = make([]float32, n*d.ValueHeads), make([]float32, n*d.ValueHeads)
	h.conved, h.o = make([]float32, n*d.Channels()), make([]float32, n*vw)
	h.headsFn = h.heads
	return h
}

// gatedScratch is the batch scratch of qwen35's gated attention, which a
// layer may have with or without recurrent layers beside it (an MTP head
// has none).
type gatedScratch struct {
	qg, gate []float32 // Wq·a [n x 2q] and its gate half [n x q]
}

// newGatedScratch sizes the scratch of the plan's gated Q products; nil
// without them.
func newGatedScratch(p *plan.Plan, n int) *gatedScratch {
	for _, layer := range p.Layers {
		for _, op := range layer.Ops {
			if o, ok := op.(plan.Products); ok {
				for _, pd := range o.Outs {
					if pd.GatedHeads {
						q := p.Heads * p.HeadDim
						return &gatedScratch{qg: make([]float32, n*2*q), gate: make([]float32, n*q)}
					}
				}
			}
		}
	}
	return nil
}

func (g *gatedScratch) bytes() int64 {
	if g == nil {
		return 0
	}
	return 4 * int64(len(g.qg)+len(g.gate))
}

func (h *hybrid) bytes() int64 {
	if h == nil {
		return 0
	}
	n := len(h.qkv) + len(h.z) + len(h.beta) + len(h.alpha) + len(h.conved) + len(h.o)
	return 4 * int64(n)
}

// deltaNet runs DeltaNet layer l over the n normed inputs in (positions
// pos..), writing its output projection to s.proj:
//
//	qkv, z = W_qkv·a, W_gate·a;  β = σ(W_beta·a);  g = softplus(W_alpha·a + dt_bias)·ssm_a
//	c = silu(conv([conv state ‖ qkv]));  q, k, v = split(c);  q, k = l2norm(q), l2norm(k)
//	per value head h (key head h mod H_k): S = S·e^g;  δ = β(v − Sᵀk);  S += k⊗δ;  o = Sᵀq/√S
//	out = W_out·(rms(o)·ssm_norm ⊙ silu(z))
func (b *Backend) deltaNet(l int, x *plan.DeltaNetWeights, in []float32, n int) {
	h := b.hybrid
	d := &h.cfg
	C, S, hv := d.Channels(), d.StateSize, d.ValueHeads
	vw := hv * S
	quant.MatMuls([][]float32{h.qkv[:n*C], h.z[:n*vw], h.beta[:n*hv], h.alpha[:n*hv]},
		[]quant.Matrix{matrix(x.QKV), matrix(x.Z), matrix(x.Beta), matrix(x.Alpha)}, in, n)
	eps := b.plan.NormEps
	kw := d.KeyHeads * S
	for t := 0; t < n; t++ {
		c := h.conved[t*C : (t+1)*C]
		causalConv(c, h.conv[l], h.qkv[t*C:(t+1)*C], h.convW[l], d.ConvKernel)
		for i, v := range c {
			c[i] = silu(v)
		}
		for kh := 0; kh < 2*d.KeyHeads; kh++ { // q's heads, then k's
			l2Norm(c[kh*S:(kh+1)*S], eps)
		}
	}
	// each value head's state sees only its own sequence: the heads run
	// in parallel, each over the batch's tokens in order
	h.call = headsCall{layer: l, n: n, kw: kw, eps: eps}
	quant.ParallelRange(hv, 1, h.headsFn)
	quant.MatMul(b.s.proj[:n*b.plan.Embd], matrix(x.Out), h.o[:n*vw], n)
}

// headsCall is one layer's recurrence arguments, for the pool's range
// function (a closure per call would be an allocation per layer and token).
type headsCall struct {
	layer, n, kw int
	eps          float32
}

// heads runs value heads [lo, hi) of the layer in h.call over its tokens:
// gates, the delta rule and the gated norm of each head's output.
func (h *hybrid) heads(lo, hi int) {
	a := &h.call
	d := &h.cfg
	l, C, S, hv, kw := a.layer, d.Channels(), d.StateSize, d.ValueHeads, a.kw
	vw := hv * S
	for head := lo; head < hi; head++ {
		kh := head % d.KeyHeads
		m, norm := h.mat[l][head*S*S:(head+1)*S*S], h.norm[l]
		for t := 0; t < a.n; t++ {
			c := h.conved[t*C : (t+1)*C]
			beta := sigmoid(h.beta[t*hv+head])
			g := softplus(h.alpha[t*hv+head]+h.dt[l][head]) * h.a[l][head]
			o := h.o[t*vw+head*S : t*vw+(head+1)*S]
			deltaStep(m, c[kh*S:(kh+1)*S], c[kw+kh*S:kw+(kh+1)*S], c[2*kw+head*S:2*kw+(head+1)*S], o, g, beta)
			gatedNorm(o, h.z[t*vw+head*S:t*vw+(head+1)*S], norm, S, a.eps)
		}
	}
}

// causalConv is ggml's ssm_conv for one token followed by the state's
// shift: out[c] = Σ_i w[c][i]·win[i][c] over the window of the K−1 saved
// inputs and the new one (the last tap multiplies the new input), each
// product added in tap order with one rounding (the FMA the compiler emits
// for ggml's loop); then the oldest input leaves the state and the new one
// joins it.
func causalConv(out, state, in, w []float32, K int) {
	C := len(in)
	for c := 0; c < C; c++ {
		taps := w[c*K : (c+1)*K]
		var sum float32
		for i := 0; i < K-1; i++ {
			sum = fma32(state[i*C+c], taps[i], sum)
		}
		out[c] = fma32(in[c], taps[K-1], sum)
	}
	copy(state, state[C:])
	copy(state[(K-2)*C:], in)
}

// l2Norm is ggml's l2_norm in place: x / max(‖x‖, eps), the squares
// rounded to float32 and summed in float64.
func l2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	scale := 1 / max(float32(math.Sqrt(float64(float32(sum)))), eps)
	for i := range x {
		x[i] *= scale
	}
}

// sigmoid is ggml's 1/(1+e^−x).
func sigmoid(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }

// softplus is ggml's log(1+e^x), the identity above 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + float32(math.Exp(float64(x))))))
}

// deltaStep is one token of the gated delta rule for one value head, in
// the order of ggml-cpu's fused gated_delta_net on the transposed state m
// (row j holds column j of S): the decay e^g scales every element, then
// per row j δ = (v_j − m_j·k)·β and m_j += k·δ, then o_j = (m_j·q)/√S.
// This is the decode loop's hottest code (H_v·S² elements per layer and
// token, each read and written): the dot products are dot8's plain float32
// lanes rather than ggml's FMA order, whose float64 emulation (fma32) made
// the step several times slower (docs/benchmarks.md, "2026-12-03: the CPU
// DeltaNet step sums in plain float32 lanes"), and runtime/simd repeats
// them in vector registers; the logits stay within ~3e-4 of llama.cpp's,
// against a bound of 1e-2.
func deltaStep(m, q, k, v, o []float32, g, beta float32) {
	S := len(q)
	decay := float32(math.Exp(float64(g)))
	scale := 1 / float32(math.Sqrt(float64(S)))
	if nativeDelta && simd.DeltaStep(m, q, k, v, o, decay, beta, scale) {
		return // the same computation in vector registers
	}
	for i := range m {
		m[i] *= decay
	}
	k = k[:S]
	for j := 0; j < S; j++ {
		row := m[j*S : (j+1)*S]
		delta := (v[j] - dot8(row, k)) * beta
		for i, ki := range k {
			row[i] += float32(ki * delta) // the conversion forbids fusing: the same bits on every platform
		}
		o[j] = dot8(row, q) * scale
	}
}

// nativeDelta lets tests run deltaStep's portable loops on a machine with
// native kernels.
var nativeDelta = true

// dot8 is a dot product in eight float32 lanes (as an 8-wide vector unit
// sums), the lanes added pairwise, then the tail.
func dot8(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
		s4 += float32(a[i+4] * b[i+4])
		s5 += float32(a[i+5] * b[i+5])
		s6 += float32(a[i+6] * b[i+6])
		s7 += float32(a[i+7] * b[i+7])
	}
	s := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

// gatedNorm is qwen35's output gate in place on o: each head's S values
// RMS-normalized, × ssm_norm, × silu(z).
func gatedNorm(o, z, w []float32, S int, eps float32) {
	for h := 0; h+S <= len(o); h += S {
		rmsNorm(o[h:h+S], o[h:h+S], w, eps)
	}
	for i := range o {
		o[i] *= silu(z[i])
	}
}

// gatedQ runs the gated attention's Q projection: Wq's rows hold [q_h |
// gate_h] per head; q goes to s.q (where the recipe expects it) and the
// gate to the gated scratch.
func (b *Backend) gatedQ(wq quant.Matrix, hd int, in []float32, n int) {
	h := b.gated
	q := b.plan.Heads * hd
	quant.MatMul(h.qg[:n*2*q], wq, in, n)
	for i := 0; i < n; i++ {
		for head := 0; head < b.plan.Heads; head++ {
			src := h.qg[i*2*q+head*2*hd:]
			copy(b.s.q[i*q+head*hd:i*q+(head+1)*hd], src[:hd])
			copy(h.gate[i*q+head*hd:i*q+(head+1)*hd], src[hd:2*hd])
		}
	}
}

// gateAttention multiplies the attention output by σ(gate).
func (b *Backend) gateAttention(n int) {
	q := b.plan.Heads * b.plan.HeadDim
	att, gate := b.s.att[:n*q], b.gated.gate[:n*q]
	for i := range att {
		att[i] *= sigmoid(gate[i])
	}
}

// sharedExpert adds a layer's shared expert to out: down(silu(gate·x) ⊙
// up·x) × σ(Scale·x), per token.
func (b *Backend) sharedExpert(x *plan.SharedExpert, in, out []float32, n int) {
	h, e := b.experts, b.plan.Embd
	ff := x.Up.Rows
	switch {
	case !x.Act.Gated():
		quant.MatMul(h.shG[:n*ff], matrix(x.Up), in, n)
		b.activate(x.Act, h.shG[:n*ff], nil)
	case x.Scale.Data == nil:
		quant.MatMuls([][]float32{h.shG[:n*ff], h.shU[:n*ff]}, []quant.Matrix{matrix(x.Gate), matrix(x.Up)}, in, n)
		b.activate(x.Act, h.shG[:n*ff], h.shU[:n*ff])
	default:
		quant.MatMuls([][]float32{h.shG[:n*ff], h.shU[:n*ff], h.shLogit[:n]},
			[]quant.Matrix{matrix(x.Gate), matrix(x.Up), matrix(x.Scale)}, in, n)
		swiglu(h.shG[:n*ff], h.shU[:n*ff])
	}
	y := h.shD[:n*e]
	quant.MatMul(y, matrix(x.Down), h.shG[:n*ff], n)
	if x.Scale.Data == nil {
		// ungated (deepseek2, granitehybrid, nemotron_h_moe): llama.cpp
		// adds the routed experts' sum and the shared expert's output
		for i := range out[:n*e] {
			out[i] += y[i]
		}
		return
	}
	for i := 0; i < n; i++ {
		gate := sigmoid(h.shLogit[i])
		o, yi := out[i*e:(i+1)*e], y[i*e:(i+1)*e]
		for j := range o {
			o[j] += yi[j] * gate
		}
	}
}
