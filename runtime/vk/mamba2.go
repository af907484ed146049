package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// Mamba2 layers (nemotron_h, granitehybrid; runtime/arch/mamba2.go) as
// dispatches, per layer:
//
//	matvec    x → z | xBC | dt     RMSNorm(attn_norm) fused, ssm_in
//	ssm_conv  xBC → x | B | C      causal conv + bias + SiLU per channel; the conv state
//	ssm_scan  x, B, C, dt → y      per head: softplus(dt + dt_bias), decay e^(δ·A), D skip; the scan state
//	ssm_norm  y, z → y             y ⊙ silu(z), RMS-normed in groups × ssm_norm
//	matvec    y → x                ssm_out, with the residual add when it fuses
//
// The states live on the device between steps (cache.convState and
// cache.mat, the conv state [K−1][channels] oldest first and the scan
// state [head][p][n] as ggml_ssm_scan's), so that checkpoints and rewind
// (state.go) serve them as the DeltaNet layers'. The ungated FFN of the
// Nemotron-H layers beside them (ReLU² of the up product, no gate) is
// relu2 between the two products.

// mamba2Weights are one Mamba2 layer's weights on the device.
type mamba2Weights struct {
	in, out *Matrix
	conv    *vulkan.Buffer // [channels][K]
	// params: dt_bias [H], A [H], D [H], the conv bias [channels] (zeros
	// without one), ssm_norm [inner]
	params *vulkan.Buffer
}

// mamba2Buffers are the Mamba2 activations; nil without Mamba2 layers.
type mamba2Buffers struct {
	proj, xbc, y              *vulkan.Buffer
	pStride, cStride, yStride int
}

// uploadMamba2 puts a Mamba2 layer's weights on the device.
func (ws *weights) uploadMamba2(d *gpu, up func(plan.Weight) *Matrix, sh *plan.Mamba2Shape, x *plan.Mamba2Weights) (*mamba2Weights, error) {
	w := &mamba2Weights{in: up(x.In), out: up(x.Out)}
	f32 := func(v plan.Weight, n int) ([]float32, error) {
		f := make([]float32, n)
		if v.Rows*v.Cols != n {
			return nil, fmt.Errorf("tensor %q: %d values, want %d", v.Name, v.Rows*v.Cols, n)
		}
		if err := quant.Dequantize(v.Type, v.Data, f); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", v.Name, err)
		}
		return f, nil
	}
	C := sh.ConvChannels()
	conv, err := f32(x.Conv, C*sh.ConvKernel)
	if err != nil {
		return nil, err
	}
	if w.conv, err = ws.floats(d, x.Conv.Name, conv, len(conv)); err != nil {
		return nil, err
	}
	var params []float32
	for _, v := range []struct {
		w plan.Weight
		n int
	}{{x.DtBias, sh.Heads}, {x.A, sh.Heads}, {x.D, sh.Heads}} {
		f, err := f32(v.w, v.n)
		if err != nil {
			return nil, err
		}
		params = append(params, f...)
	}
	bias := make([]float32, C)
	if x.ConvBias != nil {
		if bias, err = f32(*x.ConvBias, C); err != nil {
			return nil, err
		}
	}
	norm, err := f32(x.Norm, sh.Inner)
	if err != nil {
		return nil, err
	}
	params = append(append(params, bias...), norm...)
	if w.params, err = ws.floats(d, x.A.Name+" (with ssm_dt.bias, ssm_d, the conv bias and ssm_norm)", params, len(params)); err != nil {
		return nil, err
	}
	return w, nil
}

// allocateMamba2 makes the Mamba2 activations (the states are the
// cache's, allocateState).
func (b *Backend) allocateMamba2(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	sh := &b.plan.Mamba2Shape
	if sh.Inner == 0 {
		return nil
	}
	m := &mamba2Buffers{
		pStride: int(alignUp(uint64(sh.InProj()), 4)),
		cStride: int(alignUp(uint64(sh.ConvChannels()), 4)),
		yStride: int(alignUp(uint64(sh.Inner), 256)), // a mat-vec's input: whole blocks, zero padding
	}
	b.act.mamba = m
	n := prefillChunk
	var err error
	for _, a := range []struct {
		dst    **vulkan.Buffer
		name   string
		floats int
	}{
		{&m.proj, "activations Mamba2 in-proj", n * m.pStride},
		{&m.xbc, "activations Mamba2 conv", n * m.cStride},
		{&m.y, "activations Mamba2 scan", n * m.yStride},
	} {
		if *a.dst, err = act(a.name, a.floats, vulkan.MemDevice); err != nil {
			return err
		}
	}
	return b.d.Zero(m.proj, m.xbc, m.y)
}

// mamba2Limits refuses the shapes the kernels do not hold: the conv's
// window and the scan's state live in registers, a head's rows are one
// workgroup.
func mamba2Limits(sh plan.Mamba2Shape) error {
	switch {
	case sh.ConvKernel > 8:
		return unsupportedOp("a Mamba2 conv of %d taps (the kernel holds 8)", sh.ConvKernel)
	case sh.State > 256:
		return unsupportedOp("a Mamba2 state of %d (the scan kernel holds 256)", sh.State)
	case sh.HeadDim() > 256:
		return unsupportedOp("Mamba2 heads of %d rows (the scan kernel runs 256 at most)", sh.HeadDim())
	}
	return nil
}

// recordMamba2 records layer l's Mamba2 mixer for the step's tokens.
func (b *Backend) recordMamba2(r *vulkan.Recorder, name func(string) string, l int, o *plan.Mamba2, w *mamba2Weights, in input, fused bool, s bodyShape) error {
	m := b.act.mamba
	sh := &o.Shape
	H, C, inner := sh.Heads, sh.ConvChannels(), sh.Inner
	proj := matvecOp{label: name("ssm in"), m: w.in, y: m.proj, ystride: m.pStride, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
	b.bind(&proj, in)
	if err := b.d.matvec(r, proj); err != nil {
		return err
	}
	const wg = 64
	conv, err := b.d.kernel("ssm_conv", 6*4, wg)
	if err != nil {
		return err
	}
	err = r.Dispatch(name("ssm conv"), conv, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(m.proj), vulkan.R(w.conv), vulkan.R(w.params), vulkan.W(b.cache.convState[l]), vulkan.W(m.xbc)},
		[]uint32{uint32(C), uint32(sh.ConvKernel), uint32(m.pStride), uint32(inner), uint32(m.cStride), uint32(3 * H)}, uint32((C+wg-1)/wg), 1, 1)
	if err != nil {
		return err
	}
	scan, err := b.d.kernel("ssm_scan", 8*4, uint32(sh.HeadDim()), uint32(sh.State))
	if err != nil {
		return err
	}
	err = r.Dispatch(name("ssm scan"), scan, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(m.proj), vulkan.R(m.xbc), vulkan.R(w.params), vulkan.W(b.cache.mat[l]), vulkan.W(m.y)},
		[]uint32{uint32(H), uint32(H / sh.Groups), uint32(inner), uint32(sh.Groups), uint32(m.pStride), uint32(inner + C), uint32(m.cStride), uint32(m.yStride)},
		uint32(H), 1, 1)
	if err != nil {
		return err
	}
	// the scan state, read and written whole every step (DecodeBytes)
	r.Work(uint64(8*sh.SSMFloats()), uint64(4*sh.SSMFloats())*uint64(s.cap))
	norm, err := b.d.kernel("ssm_norm", 5*4, wg)
	if err != nil {
		return err
	}
	err = r.Dispatch(name("ssm norm"), norm, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.R(m.proj), vulkan.R(w.params), vulkan.W(m.y)},
		[]uint32{uint32(inner / sh.Groups), uint32(m.pStride), uint32(m.yStride), uint32(3*H + C), math.Float32bits(o.Eps)},
		uint32(sh.Groups), uint32(s.cap), 1)
	if err != nil {
		return err
	}
	out := matvecOp{label: name("ssm out"), m: w.out, x: m.y, xstride: m.yStride, tokens: s.cap, step: b.graph.step, xq: b.act.xq}
	b.out(&out, fused)
	return b.d.matvec(r, out)
}

// recordReLU2 squares the positive part of an up product in place (the
// ungated FFN: down·relu(up·x)²): n values in rows of stride floats, per
// rows a token.
func (b *Backend) recordReLU2(r *vulkan.Recorder, label string, h *vulkan.Buffer, n, stride, per int, s bodyShape) error {
	const wg = 64
	k, err := b.d.kernel("relu2", 3*4, wg)
	if err != nil {
		return err
	}
	return r.Dispatch(label, k, []vulkan.Arg{vulkan.R(b.graph.step), vulkan.W(h)},
		[]uint32{uint32(n), uint32(stride), uint32(per)}, uint32((n+wg-1)/wg), uint32(s.cap*per), 1)
}
