package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// Gated DeltaNet layers (qwen35, qwen35moe) as dispatches, per layer:
//
//	matvec   x → qkv, z, β, α   RMSNorm(attn_norm) fused, one mat-vec each
//	dn_conv  qkv → c            causal conv + SiLU per channel, token by token; the conv state
//	dn_delta c, β, α, z → o     per value head: l2 norms, decay, delta rule, gated RMS norm; the matrix state
//	matvec   o → x              ssm_out with the residual add
//
// and the FFN as any layer's. The states live on the device between steps
// (one conv and one matrix buffer per layer); checkpoints are host copies.
// Their full-attention neighbours add the Q gate: attn_q's [q | gate] rows
// per head are split at upload into the Q rows (stacked with K and V as
// usual) and a gate matrix whose product multiplies the attention output
// through σ (dn_gate) before attn_output. The shared expert of qwen35moe
// runs after the routed ones: gate+up, down, its gate logit, and dn_shared
// adds σ(logit)·down to x.

// dnWeights are one DeltaNet layer's weights on the device.
type dnWeights struct {
	qkv, z, beta, alpha, out *Matrix
	conv                     *vulkan.Buffer // [channels][K]
	params                   *vulkan.Buffer // dt_bias [H_v], ssm_a [H_v], ssm_norm [S]
}

// sharedWeights is a layer's shared expert on the device.
type sharedWeights struct {
	gate, up, down, scale *Matrix
}

// dnBuffers are the activations of a model with DeltaNet layers, gated
// attention or a shared expert; nil otherwise. The layers' states are the
// cache's (cache.go).
type dnBuffers struct {
	qkv, conv, z, beta, alpha, o *vulkan.Buffer
	cStride, zStride, bStride    int
	oStride                      int
	// gated attention: the gate half of attn_q's product [n][qStride]
	gate *vulkan.Buffer
	// the shared expert: its gate/up product, partial sums, output and logit
	shH, shH2, shY, shS *vulkan.Buffer
	shStride            int
}

// uploadDeltaNet puts a DeltaNet layer's weights on the device.
func (ws *weights) uploadDeltaNet(d *gpu, up func(plan.Weight) *Matrix, x *plan.DeltaNetWeights) (*dnWeights, error) {
	w := &dnWeights{qkv: up(x.QKV), z: up(x.Z), beta: up(x.Beta), alpha: up(x.Alpha), out: up(x.Out)}
	conv := make([]float32, x.Conv.Rows*x.Conv.Cols)
	if err := quant.Dequantize(x.Conv.Type, x.Conv.Data, conv); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", x.Conv.Name, err)
	}
	var err error
	if w.conv, err = ws.floats(d, x.Conv.Name, conv, len(conv)); err != nil {
		return nil, err
	}
	var params []float32
	for _, v := range []plan.Weight{x.DtBias, x.A, x.Norm} {
		f := make([]float32, v.Cols)
		if err := quant.Dequantize(v.Type, v.Data, f); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", v.Name, err)
		}
		params = append(params, f...)
	}
	if w.params, err = ws.floats(d, x.A.Name+" (with ssm_dt.bias and ssm_norm)", params, len(params)); err != nil {
		return nil, err
	}
	return w, nil
}

// splitGatedQ splits attn_q's rows, [q_h | gate_h] per head, into the Q
// rows and the gate rows (rows are contiguous in every type).
func splitGatedQ(w plan.Weight, heads, hd int) (q, gate plan.Weight) {
	rb, _ := w.Type.RowBytes(uint64(w.Cols))
	head := int(rb) * hd
	qd, gd := make([]byte, 0, len(w.Data)/2), make([]byte, 0, len(w.Data)/2)
	for h := 0; h < heads; h++ {
		qd = append(qd, w.Data[2*h*head:(2*h+1)*head]...)
		gd = append(gd, w.Data[(2*h+1)*head:(2*h+2)*head]...)
	}
	q = plan.Weight{Name: w.Name + "[q]", Type: w.Type, Cols: w.Cols, Rows: heads * hd, Data: qd}
	gate = plan.Weight{Name: w.Name + "[gate]", Type: w.Type, Cols: w.Cols, Rows: heads * hd, Data: gd}
	return q, gate
}

// allocateDeltaNet creates the DeltaNet activations and the layers' states.
func (b *Backend) allocateDeltaNet(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	p := b.plan
	gated, shared, deltaNet := false, 0, false
	forOps(p, func(_ int, op plan.Op) {
		switch o := op.(type) {
		case plan.Products:
			gated = gated || o.Outs[0].GatedHeads
		case plan.SharedExpert:
			shared = o.Up.Rows
		case plan.DeltaNet:
			deltaNet = true
		}
	})
	if !deltaNet && !gated && shared == 0 {
		return nil
	}
	dn := &dnBuffers{}
	b.act.dn = dn
	n := prefillChunk
	var err error
	if gated {
		if dn.gate, err = act("activations attention gate", n*b.act.qStride, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if shared > 0 {
		dn.shStride = int(alignUp(uint64(shared), 256))
		for _, a := range []struct {
			dst    **vulkan.Buffer
			name   string
			floats int
		}{
			{&dn.shH, "activations shared expert", n * dn.shStride},
			{&dn.shH2, "activations shared expert partial sums", n * dn.shStride},
			{&dn.shY, "activations shared expert out", n * b.act.xStride},
			{&dn.shS, "shared expert gate logits", n},
		} {
			if *a.dst, err = act(a.name, a.floats, vulkan.MemDevice); err != nil {
				return err
			}
		}
	}
	if !deltaNet {
		return nil // no DeltaNet layers (lfm2's short convolutions: shortconv.go)
	}
	d := &p.DeltaNetShape
	vw := d.ValueHeads * d.StateSize
	dn.cStride = int(alignUp(uint64(d.Channels()), 4))
	dn.zStride = int(alignUp(uint64(vw), 4))
	dn.bStride = int(alignUp(uint64(d.ValueHeads), 4))
	dn.oStride = int(alignUp(uint64(vw), 256)) // a mat-vec's input: whole blocks, zero padding
	for _, a := range []struct {
		dst    **vulkan.Buffer
		name   string
		floats int
	}{
		{&dn.qkv, "activations DeltaNet qkv", n * dn.cStride},
		{&dn.conv, "activations DeltaNet conv", n * dn.cStride},
		{&dn.z, "activations DeltaNet z", n * dn.zStride},
		{&dn.beta, "activations DeltaNet beta", n * dn.bStride},
		{&dn.alpha, "activations DeltaNet alpha", n * dn.bStride},
		{&dn.o, "activations DeltaNet out", n * dn.oStride},
	} {
		if *a.dst, err = act(a.name, a.floats, vulkan.MemDevice); err != nil {
			return err
		}
	}
	return nil
}

// recordDeltaNet records a DeltaNet layer's mixer for the step's tokens:
// x += ssm_out·(its output).
func (b *Backend) recordDeltaNet(r *vulkan.Recorder, name func(string) string, l int, o *plan.DeltaNet, w *dnWeights, in input, fused bool, s bodyShape) error {
	dn := b.act.dn
	d := &o.Shape
	for _, p := range []struct {
		label  string
		m      *Matrix
		y      *vulkan.Buffer
		stride int
	}{{"dn qkv", w.qkv, dn.qkv, dn.cStride}, {"dn z", w.z, dn.z, dn.zStride}, {"dn beta", w.beta, dn.beta, dn.bStride}, {"dn alpha", w.alpha, dn.alpha, dn.bStride}} {
		op := matvecOp{label: name(p.label), m: p.m, y: p.y, ystride: p.stride, tokens: s.cap, step: b.graph.step}
		b.bind(&op, in)
		if err := b.d.matvec(r, op); err != nil {
			return err
		}
	}
	const wg = 64
	conv, err := b.d.kernel("dn_conv", 3*4, wg)
	if err != nil {
		return err
	}
	C := d.Channels()
	err = r.Dispatch(name("dn conv"), conv, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(dn.qkv), vulkan.R(w.conv), vulkan.W(b.cache.convState[l]), vulkan.W(dn.conv)},
		[]uint32{uint32(C), uint32(d.ConvKernel), uint32(dn.cStride)}, uint32((C+wg-1)/wg), 1, 1)
	if err != nil {
		return err
	}
	delta, err := b.d.kernel("dn_delta", 8*4, uint32(d.StateSize), uint32(d.StateSize))
	if err != nil {
		return err
	}
	scale := 1 / float32(math.Sqrt(float64(d.StateSize)))
	err = r.Dispatch(name("dn delta"), delta, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(dn.conv), vulkan.R(dn.beta), vulkan.R(dn.alpha), vulkan.R(dn.z), vulkan.R(w.params), vulkan.W(b.cache.mat[l]), vulkan.W(dn.o)},
		[]uint32{uint32(d.KeyHeads), uint32(d.ValueHeads), uint32(dn.cStride), uint32(dn.bStride), uint32(dn.zStride), uint32(dn.oStride), math.Float32bits(o.Eps), math.Float32bits(scale)},
		uint32(d.ValueHeads), 1, 1)
	if err != nil {
		return err
	}
	// the matrix state, read and written whole every step (DecodeBytes)
	r.Work(uint64(8*d.MatrixFloats()), uint64(3*d.MatrixFloats())*uint64(s.cap))
	out := matvecOp{label: name("dn out"), m: w.out, x: dn.o, xstride: dn.oStride, tokens: s.cap, step: b.graph.step}
	b.out(&out, fused)
	return b.d.matvec(r, out)
}

// recordAttnGate multiplies the attention output by σ(gate).
func (b *Backend) recordAttnGate(r *vulkan.Recorder, label string, n int, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("dn_gate", 2*4, wg)
	if err != nil {
		return err
	}
	return r.Dispatch(label, k, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.W(b.act.att), vulkan.R(b.act.dn.gate)},
		[]uint32{uint32(n), uint32(b.act.qStride)}, uint32((n+wg-1)/wg), uint32(s.cap), 1)
}

// recordSharedProducts runs a layer's shared expert on the FFN's normed
// input (before the routed experts add theirs to x): down(act(gate·f)·up·f)
// into shY and the gate logit scale·f into shS.
//
// Without a σ gate (gated false) only gate+up run here: recordSharedDown
// adds the down product to the routed experts' sum after them.
func (b *Backend) recordSharedProducts(r *vulkan.Recorder, name func(string) string, x *sharedWeights, in input, act uint32, gated bool, s bodyShape) error {
	dn := b.act.dn
	if x.gate == nil {
		// ungated: relu(up·x)²
		up := matvecOp{label: name("shared up"), m: x.up, y: dn.shH, ystride: dn.shStride, tokens: s.cap, step: b.graph.step}
		b.bind(&up, in)
		if err := b.d.matvec(r, up); err != nil {
			return err
		}
		if err := b.recordReLU2(r, name("shared relu²"), dn.shH, x.up.Rows, dn.shStride, 1, s); err != nil {
			return err
		}
	} else {
		ffn := matvecOp{label: name("shared gate+up"), m: x.gate, m2: x.up, y: dn.shH, y2: dn.shH2, ystride: dn.shStride, tokens: s.cap, step: b.graph.step, act: act}
		b.bind(&ffn, in)
		if err := b.recordPair(r, ffn, name("shared gate"), name("shared up·act(gate)")); err != nil {
			return err
		}
	}
	if !gated {
		return nil
	}
	down := matvecOp{label: name("shared down"), m: x.down, x: dn.shH, xstride: dn.shStride, y: dn.shY, ystride: b.act.xStride, tokens: s.cap, step: b.graph.step}
	if err := b.d.matvec(r, down); err != nil {
		return err
	}
	logit := matvecOp{label: name("shared gate logit"), m: x.scale, y: dn.shS, ystride: 1, tokens: s.cap, step: b.graph.step}
	b.bind(&logit, in)
	return b.d.matvec(r, logit)
}

// recordSharedDown adds an ungated shared expert's down product to the
// routed experts' sum: x when their residual add fused, else the branch
// output the Residual op scales and adds.
func (b *Backend) recordSharedDown(r *vulkan.Recorder, name func(string) string, x *sharedWeights, fused bool, s bodyShape) error {
	down := matvecOp{label: name("shared down"), m: x.down, x: b.act.dn.shH, xstride: b.act.dn.shStride, y: b.act.x, ystride: b.act.xStride, epi: epiResidual, tokens: s.cap, step: b.graph.step}
	if !fused {
		down.y = b.act.o
	}
	return b.d.matvec(r, down)
}

// recordSharedAdd adds the shared expert's output, × σ(its logit), to x.
func (b *Backend) recordSharedAdd(r *vulkan.Recorder, name func(string) string, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("dn_shared", 3*4, wg)
	if err != nil {
		return err
	}
	e := b.plan.Embd
	return r.Dispatch(name("shared add"), k, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.W(b.act.x), vulkan.R(b.act.dn.shY), vulkan.R(b.act.dn.shS)},
		[]uint32{uint32(e), uint32(b.act.xStride), 1}, uint32((e+wg-1)/wg), uint32(s.cap), 1)
}
