package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/vk/vulkan"
)

// ropeOp is one layer's Q/K norm, rotation and key/value cache write
// (shaders/rope.glsl) for the step's tokens: a rope.comp dispatch of its
// own, or, for a decode step on the GPU layout, the epilogue of the Q|K|V
// product that made its input (the ROPE_EPI variants of matvec_sg.comp and
// matvec_id.comp: rope.glsl's rope_after_product), which saves a
// dispatch and a barrier per layer.
type ropeOp struct {
	label string
	// spec is rope.glsl's constants: head size, rotated dimensions, NeoX
	// pairs, f32 cache, Q/K norm form, V norm, the norms' exact sums.
	spec [7]uint32
	// table is the step buffer's cos/sin table for the layer's rotation;
	// qn and kn the Q/K norm weights (the dummy where the model has none).
	table     vulkan.Arg
	q, kc, vc *vulkan.Buffer
	qn, kn    *vulkan.Buffer
	args      ropeArgs
	// arrive counts the Q|K|V product's finished workgroups when it takes
	// the rotation as its epilogue (one word, zero between dispatches);
	// nil: always a dispatch of its own.
	arrive *vulkan.Buffer
}

// ropeArgs is rope.glsl's RopeArgs, the push constants of the rotation.
type ropeArgs struct {
	heads, kvHeads     int // kvHeads 0: Q only (a layer reading another's cache)
	qkvStride, qStride int // floats per token in the Q|K|V rows and in Q
	slots              int // cache positions (a sliding-window layer's ring)
	rope               bool
	qScale, eps        float32
	// temp is the attention temperature tuning of Q (plan.PositionScale
	// fused here); Beta 0 = none.
	temp plan.Temperature
}

func (a ropeArgs) push() []uint32 {
	return []uint32{uint32(a.heads), uint32(a.kvHeads), uint32(a.qkvStride), uint32(a.qStride), uint32(a.slots), flag(a.rope),
		math.Float32bits(a.qScale), math.Float32bits(a.eps),
		math.Float32bits(a.temp.Beta), uint32(a.temp.Length), math.Float32bits(a.temp.Offset)}
}

// ropePushBytes is the size of RopeArgs in push constants.
const ropePushBytes = 11 * 4

// bindings are rope.glsl's six, in order from ROPE_BIND.
func (o *ropeOp) bindings() []vulkan.Arg {
	return []vulkan.Arg{o.table, vulkan.W(o.q), {B: o.kc, Write: true, Format: fmtU32}, {B: o.vc, Write: true, Format: fmtU32},
		{B: o.qn, Format: fmtU32}, {B: o.kn, Format: fmtU32}}
}

// ropeShared is the shared bytes rope.glsl's norms take (its ROPE_NSCALE
// floats), which a kernel with the epilogue adds to its own.
func ropeShared(qkNorm uint32) int {
	if qkNorm == 1 {
		return 4 * 512 // MAXG
	}
	return 4 * 2
}

// rope records o as a rope.comp dispatch over tokens tokens (a workgroup
// each; those past the step's count return at once), reading the Q|K|V
// rows from qkv.
func (d *gpu) rope(r *vulkan.Recorder, o *ropeOp, qkv, step *vulkan.Buffer, tokens int) error {
	spec := append([]uint32{64}, o.spec[:]...)
	k, err := d.kernel("rope", ropePushBytes, spec...)
	if err != nil {
		return err
	}
	args := append([]vulkan.Arg{{B: qkv, Format: fmtU32}, vulkan.R(step)}, o.bindings()...)
	return r.Dispatch(o.label, k, args, o.args.push(), uint32(tokens), 1, 1)
}

// fusesRope reports whether op's product takes its rotation (op.rope) as
// the epilogue: the tuning asks for it, and op is one decode token's whole
// Q|K|V (one part, from row 0, one token's rows in Y as the rotation reads
// them) on a mat-vec kernel with the epilogue — the integer-dot one, or
// the shared-x one where its shared memory holds the norms too. Every
// other product is followed by a rope.comp dispatch.
func (d *gpu) fusesRope(op *matvecOp) bool {
	o := op.rope
	if o == nil || o.arrive == nil || !d.tune.ropeInQKV {
		return false
	}
	if op.tokens != 1 || op.last || op.m2 != nil || op.moe.ids != nil || op.yoff != 0 || op.ystride != o.args.qkvStride ||
		len(op.m.parts) != 1 || (op.epi != epiStore && op.epi != epiBias) || d.useMatmul(op) {
		return false
	}
	need, limit := ropeShared(o.spec[4])+4, int(d.Info.Limits.MaxSharedMemory)
	if d.useIntDot(op) {
		return need <= limit
	}
	if !d.tune.sharedX {
		return false
	}
	sp, ok := d.planShared(op.m.Type, op.m.Units, 1, op.nt, op.f32x)
	return ok && sp.sharedBytes()+need <= limit
}

// matvecKernel is the pipeline of a mat-vec kernel family (family names
// its variants: "matvec_sg_", "matvec_id_") for op, with push bytes of
// push constants and the constants spec: where op takes its rotation as
// the epilogue (fusesRope said so), the family's ROPE_EPI variant, and
// the counter and rope.glsl's bindings and push constants to append after
// the product's own.
func (d *gpu) matvecKernel(op *matvecOp, family string, push uint32, spec []uint32) (*vulkan.Kernel, []vulkan.Arg, []uint32, error) {
	ro := op.rope
	if ro == nil {
		k, err := d.kernel(family+wtypeName(op.m), push, spec...)
		return k, nil, nil, err
	}
	if len(op.m.parts) != 1 || op.tokens != 1 {
		return nil, nil, nil, fmt.Errorf("%s: the rotation epilogue needs one token's whole Q|K|V in one dispatch", op.label)
	}
	k, err := d.kernel(family+"rope_"+wtypeName(op.m), push+ropePushBytes, append(spec, ro.spec[:]...)...)
	return k, append([]vulkan.Arg{vulkan.W(ro.arrive)}, ro.bindings()...), ro.args.push(), err
}

// orDummy is b, or dum where the model has no such buffer.
func orDummy(b, dum *vulkan.Buffer) *vulkan.Buffer {
	if b == nil {
		return dum
	}
	return b
}
