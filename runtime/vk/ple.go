package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// Gemma 4's additions to the block (arch/gemma4.go): the layer output
// scale and the per-layer embeddings. The PLE table itself stays in the
// mapped file on the host: for each step the host dequantizes the step's
// tokens' rows into the step buffer (uploaded with the step's parameters),
// and the device projects, normalizes and mixes them (ple.comp), then
// after each layer gates, projects and adds its slice.

// pleWeights is one layer's per-layer embedding weights.
type pleWeights struct {
	gate, proj *Matrix        // inp_gate [embd → P], proj [P → embd]
	norm       *vulkan.Buffer // post_norm, padded to the x stride
}

// pleModel is the model-wide part: the projection and its norm.
type pleModel struct {
	width, layers int
	proj          *Matrix        // per_layer_model_proj [embd → layers·P]
	norm          *vulkan.Buffer // per_layer_proj_norm [P]
	token         plan.Weight    // the table the host reads rows of
	eps           float32
}

// pleBuffers are a step's per-layer inputs (activations.ple); the table
// rows they start from are in the step buffer (graph.pleOff).
type pleBuffers struct {
	in         *vulkan.Buffer // [token][inStride]: the projection, then the per-layer inputs
	gate       *vulkan.Buffer // [token][gateStride]: one layer's gate
	inStride   int
	gateStride int
	row        []float32 // one token's table row, dequantized on the host
}

// rawBytes is the room a step's table rows take in the step buffer; 0
// without per-layer embeddings.
func (p *pleModel) rawBytes() int {
	if p == nil {
		return 0
	}
	return int(alignUp(uint64(4*prefillChunk*p.width*p.layers), regionAlign))
}

// allocatePLE makes the per-layer input and gate buffers.
func (b *Backend) allocatePLE(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	p := b.weights.ple
	if p == nil {
		return nil
	}
	a := &pleBuffers{inStride: int(alignUp(uint64(p.width*p.layers), 256)), gateStride: int(alignUp(uint64(p.width), 256)), row: make([]float32, p.token.Cols)}
	b.act.ple = a
	var err error
	if a.in, err = act("per-layer embedding inputs", prefillChunk*a.inStride, vulkan.MemDevice); err != nil {
		return err
	}
	a.gate, err = act("per-layer embedding gate", prefillChunk*a.gateStride, vulkan.MemDevice)
	return err
}

// pleRows writes the step's tokens' table rows (dequantized from the
// mapped file) to the step buffer.
func (b *Backend) pleRows(tokens []int32) error {
	if b.weights.ple == nil {
		return nil
	}
	t := b.weights.ple.token
	rb := len(t.Data) / t.Rows
	m := b.graph.stepMapped()
	row := b.act.ple.row
	for i, id := range tokens {
		if err := quant.Dequantize(t.Type, t.Data[int(id)*rb:(int(id)+1)*rb], row); err != nil {
			return fmt.Errorf("tensor %q row %d: %w", t.Name, id, err)
		}
		o := b.graph.pleOff + 4*i*len(row)
		for j, v := range row {
			putF32(m, o+4*j, v)
		}
	}
	return nil
}

// recordPLEInputs projects the scaled embeddings and finishes the
// per-layer inputs (ple.comp MODE 0).
func (b *Backend) recordPLEInputs(r *vulkan.Recorder, s bodyShape) error {
	p, a := b.weights.ple, b.act.ple
	err := b.d.matvec(r, matvecOp{label: "PLE projection", m: p.proj, x: b.act.x, xstride: b.act.xStride, y: a.in, ystride: a.inStride, tokens: s.cap, step: b.graph.step})
	if err != nil {
		return err
	}
	k, err := b.d.kernel("ple", 9*4, b.d.Info.SureSubgroup()*4, 0, flag(p.proj.cpuOrder))
	if err != nil {
		return err
	}
	raw := vulkan.Arg{B: b.graph.step, Off: uint64(b.graph.pleOff), Size: uint64(p.rawBytes()), Format: fmtU32}
	unused, err := b.d.geluArg(false)
	if err != nil {
		return err
	}
	return r.Dispatch("PLE inputs", k, []vulkan.Arg{raw, {B: p.norm, Format: fmtU32}, {B: a.in, Write: true}, {B: a.gate, Write: true}, vulkan.R(b.graph.step), unused},
		b.plePush(0), uint32(s.cap), 1, 1)
}

func (b *Backend) plePush(layer int) []uint32 {
	p, a := b.weights.ple, b.act.ple
	sqrtf := func(x float64) float32 { return float32(math.Sqrt(x)) }
	return []uint32{uint32(p.width), uint32(p.layers), uint32(a.inStride), uint32(a.gateStride), uint32(layer),
		math.Float32bits(1 / sqrtf(float64(b.plan.Embd))), math.Float32bits(sqrtf(float64(p.width))), math.Float32bits(1 / sqrtf(2)),
		math.Float32bits(p.eps)}
}

// recordPLELayer adds layer's per-layer embedding term to x:
// x += rms(proj·(gelu(gate·x) ⊙ input))·norm.
func (b *Backend) recordPLELayer(r *vulkan.Recorder, name func(string) string, layer int, pw *pleWeights, eps float32, s bodyShape) error {
	a := b.act.ple
	err := b.d.matvec(r, matvecOp{label: name("PLE gate"), m: pw.gate, x: b.act.x, xstride: b.act.xStride, y: a.gate, ystride: a.gateStride, tokens: s.cap, step: b.graph.step})
	if err != nil {
		return err
	}
	k, err := b.d.kernel("ple", 9*4, b.d.Info.SureSubgroup()*4, 1)
	if err != nil {
		return err
	}
	dum, err := b.d.dummy()
	if err != nil {
		return err
	}
	gelu, err := b.d.geluArg(true)
	if err != nil {
		return err
	}
	if err := r.Dispatch(name("PLE gelu·input"), k, []vulkan.Arg{{B: dum, Format: fmtU32}, {B: dum, Format: fmtU32}, {B: a.in, Write: true}, {B: a.gate, Write: true}, vulkan.R(b.graph.step), gelu},
		b.plePush(layer), uint32(s.cap), 1, 1); err != nil {
		return err
	}
	if err := b.d.matvec(r, matvecOp{label: name("PLE proj"), m: pw.proj, x: a.gate, xstride: a.gateStride, y: b.act.o, ystride: b.act.xStride, epi: epiStore, tokens: s.cap, step: b.graph.step}); err != nil {
		return err
	}
	return b.recordBranchEnd(r, name("PLE out"), pw.norm, eps, 1, s)
}

// recordScaleStream multiplies x by by (Gemma 4's layer_output_scale).
func (b *Backend) recordScaleStream(r *vulkan.Recorder, label string, by float32, s bodyShape) error {
	if by == 1 {
		return nil
	}
	k, err := b.d.kernel("scale", 3*4, 64)
	if err != nil {
		return err
	}
	return r.Dispatch(label, k, []vulkan.Arg{{B: b.act.x, Write: true}, vulkan.R(b.graph.step)},
		[]uint32{uint32(b.plan.Embd), uint32(b.act.xStride), math.Float32bits(by)}, uint32(s.cap), 1, 1)
}
