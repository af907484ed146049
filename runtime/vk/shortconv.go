package vk

import (
	"fmt"

	"vkchat/runtime/arch"
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
func (ws *weights) uploadConv(d *gpu, sc *arch.ShortConv, up func(arch.Weight) *Matrix) (*convWeights, error) {
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
func (b *Backend) bcuStride() int { return int(alignUp(uint64(3*b.cfg.Embd), 4)) }

// allocateConv makes the conv layers' activations and state buffers (the
// state is zeroed with the others by resetState).
func (b *Backend) allocateConv(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	if b.cfg.ShortConvLayers == 0 {
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
	st := &b.cache
	if len(st.convState) == 0 {
		st.convState, st.mat = make([]*vulkan.Buffer, len(b.weights.layers)), make([]*vulkan.Buffer, len(b.weights.layers))
	}
	for l, lw := range b.weights.layers {
		if lw.conv == nil {
			continue
		}
		size := uint64(4 * b.cfg.ShortConvStateFloats())
		if st.convState[l], err = b.d.NewBuffer(fmt.Sprintf("short conv state, layer %d", l), size, vulkan.MemDevice); err != nil {
			return err
		}
		st.stateBytes += size
	}
	if err := b.d.Zero(b.act.convBCU, b.act.convY); err != nil {
		return err
	}
	return st.resetState(b.d)
}

// recordShortConv records layer l's mixer (see above).
func (b *Backend) recordShortConv(r *vulkan.Recorder, name func(string) string, l int, lw *layerWeights, s bodyShape) error {
	c, d := &b.cfg, b.d
	in := matvecOp{label: name("in_proj"), m: lw.conv.inProj, x: b.act.x, xstride: b.act.xStride, norm: lw.attnNorm, eps: c.NormEps,
		y: b.act.convBCU, ystride: b.bcuStride(), tokens: s.cap, step: b.graph.step}
	if err := d.matvec(r, in); err != nil {
		return err
	}
	const wg = 64
	k, err := d.kernel("shortconv", 4*4, wg)
	if err != nil {
		return err
	}
	err = r.Dispatch(name("shortconv"), k, []vulkan.Arg{{B: b.act.convBCU, Format: fmtU32}, {B: lw.conv.taps, Format: fmtU32},
		{B: b.cache.convState[l], Write: true}, vulkan.W(b.act.convY), vulkan.R(b.graph.step)},
		[]uint32{uint32(c.Embd), uint32(c.ShortConvL), uint32(b.bcuStride()), uint32(b.act.xStride)}, uint32((c.Embd+wg-1)/wg), 1, 1)
	if err != nil {
		return err
	}
	out := matvecOp{label: name("out_proj"), m: lw.conv.outProj, x: b.act.convY, xstride: b.act.xStride, y: b.act.x, ystride: b.act.xStride, epi: epiResidual, tokens: s.cap, step: b.graph.step}
	if b.rec.postBranch {
		out.y, out.epi = b.act.o, epiStore
	}
	if err := d.matvec(r, out); err != nil {
		return err
	}
	if b.rec.postBranch {
		return b.recordBranchEnd(r, name("short conv out"), nil, s)
	}
	return nil
}
