package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// The exact quantized mat-vec (shaders/matvec_exact.comp): the products
// of a quantized (or F16, BF16) matrix with Matrix.cpuOrder give the CPU backend's bits
// (runtime/quant's kernels), decode, prefill and expert rows alike: x is
// rounded as runtime/quant/act.go rounds it by a quantize dispatch of its
// own (the other kernels' rounding and norm sums are theirs), and one lane
// per (row, token) walks the row's blocks in order, summing each type's
// float terms in its Go kernel's order. It is slower than the other
// kernels (a lane per row, no tokens sharing a dequantized weight); a
// model turns it on through weights.exactQuant.

// exactTypes are the weight types matvec_exact.comp has a variant for;
// other types keep the other kernels.
var exactTypes = map[ggml.Type]bool{
	ggml.Q4_0: true, ggml.Q4_1: true, ggml.Q5_0: true, ggml.Q5_1: true, ggml.Q8_0: true,
	ggml.Q4_K: true, ggml.Q5_K: true, ggml.Q6_K: true,
	ggml.MXFP4: true, ggml.Q3_K: true, ggml.Q2_K: true, ggml.F16: true, ggml.BF16: true,
}

// exactWorkgroup is both phases' workgroup: phase 0's lanes share a
// token's blocks, phase 1's take a row each.
const exactWorkgroup = 64

// exactVecType is the vec_dot_type x is rounded to for weight type t (its
// form in XQ: rounded x serves every type of the same form).
func exactVecType(t ggml.Type) ggml.Type {
	switch t {
	case ggml.Q4_1, ggml.Q5_1:
		return ggml.Q8_1
	case ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K:
		return ggml.Q8_K
	case ggml.F16, ggml.BF16:
		return t
	}
	return ggml.Q8_0
}

// exactWords is the words per token of x rounded for weight type t by
// phase 0: the codes, d per unit and, for Q8_1, s per unit, padded to
// whole texels; for F16 and BF16 each value's f32 bits. It is at most
// xqWords (the scratch's sizing).
func exactWords(t ggml.Type, units int) int {
	if t == ggml.F16 || t == ggml.BF16 {
		return units * layouts[t].unit
	}
	w := units*layouts[t].unit/4 + units
	if exactVecType(t) == ggml.Q8_1 {
		w += units
	}
	return (w + 3) / 4 * 4
}

// exactRows is the rows of x phase 0 rounds for op: one per token, or
// per pair where an expert product reads x per pair (down).
func exactRows(op *matvecOp) int {
	if op.moe.ids != nil && op.moe.perPair {
		return max(op.tokens, 1) * op.moe.k1()
	}
	return max(op.tokens, 1)
}

// exactNT is the tokens each lane of the product takes (the kernel's NT):
// a batch's dense rows are dequantized once for 4 tokens (8 gains little
// more, and every unrolled token lengthens llvmpipe's compile); an expert
// row serves one pair (pairs mostly go to different experts), a single
// token one (docs/benchmarks.md, "vk: the exact quantized mat-vec
// (matvec_exact.go)"). op.nt, where set, is a test's choice.
func exactNT(op *matvecOp) int {
	switch {
	case op.moe.ids != nil || op.last || op.tokens <= 1:
		return 1
	case op.nt != 0:
		return op.nt
	}
	return 4
}

// useExact reports whether op takes the exact kernel: its matrix (and
// its pair's) rounds as the CPU backend's (Matrix.cpuOrder) and is of a
// type the kernel has, x is rounded (not a test's f32 x), and there is a
// scratch for the rounded x. A product recorded without a scratch (a
// MoE router, Gated DeltaNet's and lfm2's short-convolution products,
// PLE's, the MTP head's eh_proj) keeps the other kernels, and with them
// their rounding: giving those ops the scratch would also move their
// normal prefill to the tiled product.
func (d *gpu) useExact(op *matvecOp) bool {
	m := op.m
	if !m.cpuOrder || !exactTypes[m.Type] || op.f32x || op.xq == nil {
		return false
	}
	return op.m2 == nil || (op.m2.cpuOrder && op.m2.Type == m.Type)
}

// quantizeExact records phase 0 into op.xq unless the last quantize
// dispatch of this recording already holds the same input in this form.
func (d *gpu) quantizeExact(r *vulkan.Recorder, op matvecOp, tw, rows int) error {
	m := op.m
	key := newXQMemo(r, &op, rows, "exact/"+exactVecType(m.Type).String())
	if d.xqHolds(key) {
		return nil
	}
	moe, moek := uint32(0), uint32(1)
	if op.moe.ids != nil && op.moe.perPair {
		moe, moek = 2, uint32(op.moe.k1())
	}
	k, err := d.kernel("matvec_exact_"+wtypeName(m), 10*4, exactWorkgroup, 0, 0, flag(op.norm != nil), 0, 0, moe, moek, 0, 0, 1)
	if err != nil {
		return err
	}
	dum, err := d.dummy()
	if err != nil {
		return err
	}
	sink, err := d.writeSink()
	if err != nil {
		return err
	}
	nw := orDummy(op.norm, dum)
	args := make([]vulkan.Arg, 0, 19)
	for i := 0; i < 8; i++ {
		args = append(args, vulkan.Arg{B: dum})
	}
	args = append(args, vulkan.R(op.x), vulkan.R(nw), vulkan.Arg{B: dum}, vulkan.Arg{B: dum, Format: fmtU32}, vulkan.W(op.xq),
		vulkan.R(dum), vulkan.W(sink), vulkan.R(op.step), vulkan.Arg{B: dum, Format: fmtU32}, vulkan.R(dum), vulkan.Arg{B: dum, Format: fmtU32})
	push := []uint32{0, uint32(m.Units), uint32(op.xstride), 0, 0, 0, uint32(m.Cols), math.Float32bits(op.eps), 0, uint32(tw)}
	if err := r.Dispatch(op.label+" (x to "+exactVecType(m.Type).String()+", as the CPU)", k, args, push, 1, uint32(rows), 1); err != nil {
		return err
	}
	key.mark = r.Mark()
	d.xqLast = key
	return nil
}

// matvecExact records op with the exact kernel: the quantize dispatch
// where the input is not rounded yet, then one dispatch per part of the
// matrix (a pair is one dispatch). Rope (op.rope) is not fused: d.matvec
// records it after.
func (d *gpu) matvecExact(r *vulkan.Recorder, op matvecOp) error {
	m := op.m
	if op.m2 != nil && (op.m2.Type != m.Type || op.m2.Rows != m.Rows || op.m2.Cols != m.Cols || len(op.m2.parts) != len(m.parts)) {
		return fmt.Errorf("%s: paired matrices %s and %s differ in type or shape", op.label, m.Name, op.m2.Name)
	}
	if op.epi != epiStore && op.epi != epiResidual && op.epi != epiBias && op.epi != epiSwiGLU {
		return fmt.Errorf("%s: epilogue %d is for split K, which the exact mat-vec never does", op.label, op.epi)
	}
	if op.xstride%4 != 0 || op.xstride < m.Units*layouts[m.Type].unit {
		return fmt.Errorf("%s: x stride %d does not hold a row of %d units", op.label, op.xstride, m.Units)
	}
	tw := exactWords(m.Type, m.Units)
	rows := exactRows(&op)
	if need := uint64(4 * tw * rows); need > op.xq.Size {
		return fmt.Errorf("%s: x rounded for %d rows needs %d bytes, the scratch buffer has %d", op.label, rows, need, op.xq.Size)
	}
	if err := d.quantizeExact(r, op, tw, rows); err != nil {
		return fmt.Errorf("%s: rounding x: %w", op.label, err)
	}
	nt := exactNT(&op)
	k, err := d.kernel("matvec_exact_"+wtypeName(m), 10*4, exactWorkgroup, 1, uint32(op.epi), 0, flag(op.m2 != nil), op.act, op.moe.mode(), uint32(op.moe.k1()), op.biasRows(),
		flag(m.vecDot && m.Type == ggml.Q4_K), uint32(nt))
	if err != nil {
		return err
	}
	e, err := d.epilogueBuffers(&op)
	if err != nil {
		return err
	}
	dum, bias, bias2, gelu := e.dum, e.bias, e.bias2, e.gelu
	ids := orDummy(op.moe.ids, dum)
	sink, err := d.writeSink()
	if err != nil {
		return err
	}
	for pi, part := range m.parts {
		args := weightArgs(make([]vulkan.Arg, 0, 19), op, pi, dum)
		args = append(args, vulkan.R(dum), vulkan.R(dum), vulkan.R(op.xq), vulkan.Arg{B: op.xq, Format: fmtU32}, vulkan.W(sink),
			vulkan.R(bias), op.yArg(part), vulkan.R(op.step), vulkan.Arg{B: ids, Format: fmtU32}, vulkan.R(bias2), gelu)
		rows := op.moe.rows(part)
		groups := (rows + exactWorkgroup - 1) / exactWorkgroup
		tg := (op.moe.dispatchTokens(max(op.tokens, 1)) + nt - 1) / nt
		if op.last {
			tg = 1
		}
		push := []uint32{uint32(rows), uint32(m.Units), uint32(op.xstride), uint32(op.ystride), uint32(op.yoff + part.row0), flag(op.last), uint32(m.Cols), 0, uint32(part.row0), uint32(tw)}
		label := op.label + " (as the CPU)"
		if len(m.parts) > 1 {
			label = fmt.Sprintf("%s part %d", label, pi)
		}
		if err := r.Dispatch(label, k, args, push, uint32(groups), uint32(tg), 1); err != nil {
			return err
		}
		op.work(r, part.buf.Size, uint64(part.rows)*uint64(m.Cols))
	}
	return nil
}
