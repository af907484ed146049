package vk

import (
	"fmt"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// lfm2's short-convolution layers (arch/lfm2.go): per layer
//
//	matvec     x → b|c|u   RMSNorm(attn_norm) fused, in_proj
//	shortconv  b|c|u → y   c·conv(b·u), the layer's state carried over
//	matvec     y → x       out_proj with the residual add as epilogue
//
// then the FFN as an attention layer's. Each conv layer keeps its state,
// the last L-1 values of b·u per channel, in a device buffer of its own,
// listed with the DeltaNet layers' (cache.convState) so that one
// checkpoint and rewind code (state.go) serves both.

// convWeights are a short-convolution layer's mixer.
type convWeights struct {
	inProj, outProj *Matrix
	taps            *vulkan.Buffer // [embd][L] f32
}

// uploadConv uploads a short-convolution layer's weights.
func (ws *weights) uploadConv(d *gpu, sc *plan.ShortConvConv, up func(plan.Weight) *Matrix) (*convWeights, error) {
	cw := &convWeights{inProj: up(sc.InProj), outProj: up(sc.OutProj)}
	taps := make([]float32, sc.Conv.Rows*sc.Conv.Cols)
	if err := quant.Dequantize(sc.Conv.Type, sc.Conv.Data, taps); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", sc.Conv.Name, err)
	}
	var err error
	if cw.taps, err = ws.floats(d, sc.Conv.Name, taps, len(taps)); err != nil {
		return nil, err
	}
	return cw, nil
}

// bcuStride is the floats per token of the in_proj output.
func (b *Backend) bcuStride() int { return int(alignUp(uint64(3*b.plan.Embd), 4)) }

// allocateConv makes the conv layers' activations and state buffers (the
// state is zeroed with the others by resetState).
func (b *Backend) allocateConv(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	conv := false
	forOps(b.plan, func(_ int, op plan.Op) {
		_, ok := op.(plan.ShortConv)
		conv = conv || ok
	})
	if !conv {
		return nil
	}
	var err error
	n := prefillChunk
	if b.act.convBCU, err = act("activations short conv b|c|u", n*b.bcuStride(), vulkan.MemDevice); err != nil {
		return err
	}
	if b.act.convY, err = act("activations short conv output", n*b.act.xStride, vulkan.MemDevice); err != nil {
		return err
	}
	return b.d.Zero(b.act.convBCU, b.act.convY)
}

// convXQ is the scratch for a conv projection's rounded x where m rounds
// as the CPU backend's: the exact kernel (matvec_exact.go) takes a product
// only with one, else the projection rounds in the shaders' orders and the
// whole layer parts from the CPU's bits. Other matrices go without it and
// keep the f32-x mat-vec they had (a scratch would move their prefill to
// the shared-rounding kernels, and the default reference figures with it).
func (b *Backend) convXQ(m *Matrix) *vulkan.Buffer {
	if m.cpuOrder {
		return b.act.xq
	}
	return nil
}

// recordShortConv records layer l's mixer (see above).
func (b *Backend) recordShortConv(r *vulkan.Recorder, name func(string) string, l int, o *plan.ShortConv, cw *convWeights, in input, fused bool, s bodyShape) error {
	d := b.d
	e := b.plan.Embd
	inProj := matvecOp{label: name("in_proj"), m: cw.inProj, y: b.act.convBCU, ystride: b.bcuStride(), tokens: s.cap, step: b.graph.step, xq: b.convXQ(cw.inProj)}
	b.bind(&inProj, in)
	if err := d.matvec(r, inProj); err != nil {
		return err
	}
	const wg = 64
	k, err := d.kernel("shortconv", 4*4, wg)
	if err != nil {
		return err
	}
	err = r.Dispatch(name("shortconv"), k, []vulkan.Arg{{B: b.act.convBCU, Format: fmtU32}, {B: cw.taps, Format: fmtU32},
		{B: b.cache.convState[l], Write: true}, vulkan.W(b.act.convY), vulkan.R(b.graph.step)},
		[]uint32{uint32(e), uint32(o.L), uint32(b.bcuStride()), uint32(b.act.xStride)}, uint32((e+wg-1)/wg), 1, 1)
	if err != nil {
		return err
	}
	out := matvecOp{label: name("out_proj"), m: cw.outProj, x: b.act.convY, xstride: b.act.xStride, tokens: s.cap, step: b.graph.step, xq: b.convXQ(cw.outProj)}
	b.out(&out, fused)
	return d.matvec(r, out)
}
