package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// The prefill product (shaders/matmul.comp): a tiled matrix-matrix kernel
// that reads every weight once per tile of tokens, against the mat-vec's
// once per pass of at most 8. Two dispatches per product: phase 0 rounds x
// to the weight's vec_dot_type once (normalised first where the op fuses
// the RMSNorm) into a scratch buffer, phase 1 multiplies tiles of rows ×
// tokens reading that scratch. A gate/up pair is one quantization and two
// products, the second finishing with the SwiGLU epilogue.
//
// The same kernel is the grouped expert product of a mixture-of-experts
// prefill (moe.go, matmul.comp's MOE): op.moe names the banks' layout and
// groups the pair list moe_group.comp wrote; phase 1's grid gains a
// dimension, one slice per expert.

// mmPlan is how one tiled product is laid out: workgroup size, rows per
// lane, tokens per workgroup and, for GPUs, units of x staged in shared
// memory at a time (0: every lane fetches its own copy, llvmpipe's way).
type mmPlan struct {
	wg, tm, tn, kb int
	xsh            bool
}

// mmQuantWorkgroup is phase 0's workgroup: one per token, its lanes
// sharing the token's units (and its RMS).
const mmQuantWorkgroup = 64

// planMatmul lays out a product of weight type t. The tile sizes bound
// what each lane unrolls: TM rows × TN tokens × a unit of multiply-adds
// per unit of K, with TN units of x held per lane on a CPU device (a stack
// slot per value, loaded by one vector instruction for all lanes), which
// keeps llvmpipe's compile time to a few seconds per kernel. GPUs stage x
// in shared memory instead and keep only the sums in registers.
func (d *gpu) planMatmul(t ggml.Type) mmPlan {
	unit := layouts[t].unit
	if d.tune.sharedX {
		// 64 lanes × 2 rows × 16 tokens, a stage of ~128 values per token
		// (2.5-5 KiB of shared memory): each weight is read once per 16
		// tokens. The float types and the 256-weight units take 8 tokens:
		// their unrolled bodies read 4x (float x) or 8x (a unit) more
		// shared words, which llvmpipe, where CI runs this layout, takes
		// minutes to compile at 16.
		wg := min(64, max(int(d.Info.Limits.MaxWorkGroupSize), 1))
		if unit > 32 || !t.Quantized() {
			return mmPlan{wg: wg, tm: 2, tn: 8, kb: max(1, 128/unit), xsh: true}
		}
		return mmPlan{wg: wg, tm: 2, tn: 16, kb: 128 / unit, xsh: true}
	}
	// One subgroup per workgroup, each lane 16 rows × 8 tokens (4 rows of
	// the 256-weight K-quant units): measured on lavapipe with
	// BenchmarkPrefillProduct, more rows per lane beat more tokens (fewer
	// unit-loop trips carrying the sums) up to about this size; beyond it
	// compile time grows and speed does not.
	sg := int(d.Info.SureSubgroup())
	if unit > 32 {
		return mmPlan{wg: sg, tm: 4, tn: 8, kb: 1}
	}
	return mmPlan{wg: sg, tm: 16, tn: 8, kb: 1}
}

// planGrouped lays out a grouped expert product of weight type t: the
// dense plan with fewer pairs per tile. An expert's pairs fill whole tiles
// only by chance (a 64-token chunk of the MoE bench shape gives an expert
// 8 on average, 128 experts top-8 give 4), and a tile's empty columns cost
// as much as full ones: the kernel multiplies all TN.
//
// On a CPU device 2 pairs per tile (and 8 rows per lane for the 256-weight
// units instead of 4): the dequantization a larger tile would share is not
// the bound there, and BenchmarkGroupedProduct on lavapipe found this
// shape the fastest for Q4_0 and Q4_K alike (docs/benchmarks.md, "vk:
// grouped expert product tiles (matmul.go, planGrouped)").
//
// On a GPU 4 instead of 16: the product is bound by issue, not by reading
// weights (runtime/vk/cost.md), so 16-pair tiles three quarters empty
// would cost 4x the instructions per multiply-add, while 4-pair tiles
// still read a typical expert's rows once per chunk. Unmeasured on a GPU.
func (d *gpu) planGrouped(t ggml.Type) mmPlan {
	pl := d.planMatmul(t)
	if pl.xsh {
		pl.tn = 4
		return pl
	}
	pl.tn = 2
	pl.tm = max(pl.tm, 8)
	return pl
}

// xqWords is the words per token of x rounded for weight type t in phase
// 0's layout (matmul.comp): the values (4 int8 per word for the 8-bit
// forms, else f32), the block scales (8-bit forms) and the sums per
// sub-block, padded to whole texels.
func xqWords(t ggml.Type, units int, f32x bool) int {
	unit := layouts[t].unit
	uw, sw := unit, 0
	if t.Quantized() && !f32x {
		uw, sw = unit/4, units
	}
	w := units*uw + sw + units*(unit/subBlock(t))
	return (w + 3) / 4 * 4
}

// xqBound is a bound on xqWords for any weight type and a row of at most k
// (padded) values: the f32 form with a sum per 16 values.
func xqBound(k int) int { return 2 * k }

// useMatmul reports whether the forward pass records op with the tiled
// product: a dense multi-token product over all the batch's tokens of
// quantized weights (where its sums are the mat-vec's exact integer sums;
// float weights keep the mat-vec, whose summation order the references'
// bounds were measured with), with a scratch buffer for the rounded x, on
// a layout that takes it (tuning.matmul).
func (d *gpu) useMatmul(op *matvecOp) bool {
	return d.tune.matmul && op.xq != nil && op.tokens > 1 && !op.last && op.moe.ids == nil && op.m.Type.Quantized()
}

// mmIntDot reports whether the tiled product of weight type t takes its
// integer-dot variant (tuning.mmDot): quantized weights, x rounded to
// 8 bits, a device with shaderIntegerDotProduct (accelerated, unless the
// form is forced).
func (d *gpu) mmIntDot(t ggml.Type, f32x bool) bool {
	if f32x || !t.Quantized() || !d.Info.Features.IntegerDot {
		return false
	}
	switch d.tune.mmDot {
	case dotInt:
		return true
	case dotIntAccelerated:
		return d.Info.Features.IntegerDotAccelerated
	}
	return false
}

// matmul records op with the tiled product.
func (d *gpu) matmul(r *vulkan.Recorder, op matvecOp) error { return d.matmulOn(r, op, nil) }

// mmMoE is matmul.comp's MOE constant for op with the pair list groups
// (nil: a dense product).
func mmMoE(op *matvecOp, groups *vulkan.Buffer) uint32 {
	if groups == nil {
		return 0
	}
	return op.moe.mode()
}

// matmulOn records op with the tiled product: dense (groups nil), or an
// expert product over the pairs groups lists by expert (op.moe the banks'
// layout: op.m's rows are op.moe.experts runs, y is per pair, and with
// op.moe.perPair x is too).
func (d *gpu) matmulOn(r *vulkan.Recorder, op matvecOp, groups *vulkan.Buffer) error {
	m := op.m
	if groups != nil {
		if op.moe.ids == nil {
			return fmt.Errorf("%s: a pair list without the expert banks' layout", op.label)
		}
		if err := op.moe.check(op.label, op.m, op.m2); err != nil {
			return err
		}
		if lim := d.Info.Limits.MaxWorkGroupCount[2]; uint32(op.moe.experts) > lim {
			return fmt.Errorf("%s: %d experts, over the device's %d workgroups in z: %w", op.label, op.moe.experts, lim, backend.ErrUnsupported)
		}
	}
	l := layouts[m.Type]
	if op.xstride%4 != 0 || op.xstride < m.Units*l.unit {
		return fmt.Errorf("%s: x stride %d does not hold a row of %d units", op.label, op.xstride, m.Units)
	}
	if op.m2 != nil && (op.m2.Type != m.Type || op.m2.Rows != m.Rows || op.m2.Cols != m.Cols || len(op.m2.parts) != len(m.parts)) {
		return fmt.Errorf("%s: paired matrices %s and %s differ in type or shape", op.label, m.Name, op.m2.Name)
	}
	if op.epi != epiStore && op.epi != epiResidual && op.epi != epiBias && op.epi != epiSwiGLU {
		return fmt.Errorf("%s: epilogue %d is for split K, which the tiled product never does", op.label, op.epi)
	}
	if op.m2 != nil && op.epi != epiStore {
		return fmt.Errorf("%s: a gate/up pair ends in its own epilogue, not %d", op.label, op.epi)
	}
	if op.rbias != nil && op.epi == epiBias {
		return fmt.Errorf("%s: bias rows and a bias epilogue both", op.label)
	}
	if (op.rbias2 != nil) != (op.rbias != nil && op.m2 != nil) {
		return fmt.Errorf("%s: a paired product adds bias rows to both products or to neither", op.label)
	}
	tw := xqWords(m.Type, m.Units, op.f32x)
	if need := uint64(4 * tw * xqRows(&op, groups)); need > op.xq.Size {
		return fmt.Errorf("%s: quantized x of %d rows needs %d bytes, the scratch buffer has %d", op.label, xqRows(&op, groups), need, op.xq.Size)
	}
	if err := d.matmulQuant(r, op, tw, groups); err != nil {
		return err
	}
	if op.m2 == nil {
		return d.matmulProduct(r, op, tw, groups)
	}
	// gate then up·act(gate): the second product reads the first's y
	gate, up := op, op
	gate.m2, gate.label, gate.rbias2 = nil, op.label+" (gate)", nil
	up.m, up.m2, up.label, up.epi, up.rbias, up.rbias2 = op.m2, nil, op.label+" (up)", epiSwiGLU, op.rbias2, nil
	if err := d.matmulProduct(r, gate, tw, groups); err != nil {
		return err
	}
	return d.matmulProduct(r, up, tw, groups)
}

// xqRows is the rows of x phase 0 rounds: one per token, or per pair where
// an expert product reads x per pair (down).
func xqRows(op *matvecOp, groups *vulkan.Buffer) int {
	if mmMoE(op, groups) == 2 {
		return op.tokens * op.moe.k1()
	}
	return op.tokens
}

// matmulArgs is the kernel's thirteen bindings: the weights of part pi
// (none for phase 0), x, the norm weight, the scratch's two read views and
// its write binding, bias, y, the step and the pair list (groups; phase 1
// of an expert product).
func (d *gpu) matmulArgs(op matvecOp, pi int, phase int, groups *vulkan.Buffer) ([]vulkan.Arg, error) {
	dum, err := d.dummy()
	if err != nil {
		return nil, err
	}
	g := vulkan.Arg{B: dum, Format: fmtU32}
	if groups != nil && phase == 1 {
		g.B = groups
	}
	gelu, err := d.geluArg(phase == 1 && op.act == actGELU)
	if err != nil {
		return nil, err
	}
	args := make([]vulkan.Arg, 0, 14)
	for i := 0; i < 4; i++ {
		if phase == 1 && i < len(op.m.parts[pi].views) {
			args = append(args, op.m.parts[pi].views[i])
		} else {
			args = append(args, vulkan.Arg{B: dum})
		}
	}
	nw, bias := op.norm, op.bias
	if op.rbias != nil {
		bias = op.rbias
	}
	if nw == nil || phase == 1 {
		nw = dum
	}
	if bias == nil || phase == 0 {
		bias = dum
	}
	if phase == 0 {
		return append(args, vulkan.R(op.x), vulkan.R(nw), vulkan.Arg{B: dum}, vulkan.Arg{B: dum, Format: fmtU32}, vulkan.W(op.xq),
			vulkan.R(bias), vulkan.R(dum), vulkan.R(op.step), g, gelu), nil
	}
	yArg := vulkan.W(op.y) // a read-modify-write epilogue is ordered as any write
	return append(args, vulkan.Arg{B: dum}, vulkan.Arg{B: dum, Format: fmtU32}, vulkan.R(op.xq), vulkan.Arg{B: op.xq, Format: fmtU32}, vulkan.R(dum),
		vulkan.R(bias), yArg, vulkan.R(op.step), g, gelu), nil
}

// matmulQuant records phase 0: x of every token (or, for an expert
// product that reads x per pair, of every pair) rounded into op.xq. Per
// token it is the dense product's phase (the same pipeline).
func (d *gpu) matmulQuant(r *vulkan.Recorder, op matvecOp, tw int, groups *vulkan.Buffer) error {
	m := op.m
	moe, moek := uint32(0), uint32(1)
	if mmMoE(&op, groups) == 2 {
		moe, moek = 2, uint32(op.moe.k1())
	}
	k, err := d.kernel("matmul_"+wtypeName(m), 9*4, mmQuantWorkgroup, 0, 1, 1, 0, flag(op.norm != nil), flag(!op.f32x), 0, 0, 0, 1, 1, moe, moek, 1)
	if err != nil {
		return err
	}
	args, err := d.matmulArgs(op, 0, 0, groups)
	if err != nil {
		return err
	}
	push := []uint32{0, uint32(m.Units), uint32(op.xstride), 0, 0, uint32(m.Cols), math.Float32bits(op.eps), 0, uint32(tw)}
	return r.Dispatch(op.label+" (x to "+m.Type.String()+"'s vec_dot_type)", k, args, push, 1, uint32(xqRows(&op, groups)), 1)
}

// matmulProduct records phase 1 for every part of op.m (an expert bank is
// one part, a grid slice per expert).
func (d *gpu) matmulProduct(r *vulkan.Recorder, op matvecOp, tw int, groups *vulkan.Buffer) error {
	m := op.m
	moe := mmMoE(&op, groups)
	pl := d.planMatmul(m.Type)
	if moe != 0 {
		pl = d.planGrouped(m.Type)
	}
	shw := 1
	if pl.xsh {
		l := layouts[m.Type]
		uwords := l.unit + l.unit/subBlock(m.Type)
		if m.Type.Quantized() && !op.f32x {
			uwords = l.unit/4 + 1 + l.unit/subBlock(m.Type)
		}
		shw = pl.tn * pl.kb * uwords
	}
	kb := max(pl.kb, 1)
	experts := 1
	if moe != 0 {
		experts = op.moe.experts
	}
	kname := "matmul_" + wtypeName(m)
	if d.mmIntDot(m.Type, op.f32x) {
		kname = "matmul_id_" + wtypeName(m)
	}
	k, err := d.kernel(kname, 9*4, uint32(pl.wg), 1, uint32(pl.tm), uint32(pl.tn), uint32(op.epi), 0, flag(!op.f32x), op.act, op.biasRows(), flag(pl.xsh), uint32(kb), uint32(shw),
		moe, uint32(op.moe.k1()), uint32(experts))
	if err != nil {
		return err
	}
	for pi, part := range m.parts {
		args, err := d.matmulArgs(op, pi, 1, groups)
		if err != nil {
			return err
		}
		// A grid slice per expert, its rows (op.moe.rows) by its pairs,
		// at most one per token (route picks k distinct experts); the
		// workgroups stride over the tiles of any more. On a CPU device
		// one workgroup per row tile and expert takes all its tiles: a
		// workgroup is a loop over its lanes there, and the many that
		// would find no pairs (most experts have fewer pairs than the
		// batch has tokens) cost their launches (docs/benchmarks.md, "vk:
		// grouped expert product tiles (matmul.go, planGrouped)"). A GPU
		// spreads a popular
		// expert's tiles over workgroups, and an empty one is nearly free.
		rows := op.moe.rows(part)
		if moe == 0 {
			rows = part.rows
		}
		rowsPerGroup := pl.wg * pl.tm
		rg := (rows + rowsPerGroup - 1) / rowsPerGroup
		tg := (op.tokens + pl.tn - 1) / pl.tn
		if moe != 0 && !pl.xsh {
			tg = 1
		}
		push := []uint32{uint32(rows), uint32(m.Units), 0, uint32(op.ystride), uint32(op.yoff + part.row0), 0, 0, uint32(part.row0), uint32(tw)}
		label := op.label
		if len(m.parts) > 1 {
			label = fmt.Sprintf("%s part %d", label, pi)
		}
		if err := r.Dispatch(label, k, args, push, uint32(rg), uint32(tg), uint32(experts)); err != nil {
			return err
		}
		bytes, macs := part.buf.Size, uint64(part.rows)*uint64(m.Cols)
		if moe != 0 {
			bytes, macs = op.moe.work(bytes, macs, op.tokens)
		}
		r.Work(bytes, macs)
	}
	return nil
}
