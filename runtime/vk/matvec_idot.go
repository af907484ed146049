package vk

import (
	"fmt"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// The integer-dot mat-vec (shaders/matvec_id.comp): x rounded to the
// weight type's 8-bit vec_dot_type once per input by a quantize dispatch
// (matmul.comp's phase 0, the tiled prefill product's), shared by every
// mat-vec that reads the same input while it is unchanged (q, k and v of a
// layer), and the weights unpacked to int8 lanes and multiplied four at a
// time with OpSDot. On a GPU the float kernels spend ~5.6 instructions per
// Q4_0 weight (an int→float conversion and a multiply-add per weight,
// their unpacking and x's), this one ~1.1 (cost.md): a big GPU's decode
// becomes bound by bandwidth again rather than by arithmetic.

// idPlan is how one integer-dot mat-vec is laid out.
type idPlan struct {
	wg, lpr, teams, nt, rpg int
}

// idUnitsPerLane is the units each lane of a team should take: the kernel
// takes four 32-weight units per trip with their loads in flight together,
// so a row gets as few lanes as keep two trips per lane; a 256-weight unit
// is eight of those already.
func idUnitsPerLane(t ggml.Type) int {
	if layouts[t].unit > 32 {
		return 2
	}
	return 8
}

// planIntDot lays out an integer-dot mat-vec of a matrix with units per
// row for a batch of tokens: lanes per row sized from K (a 2048-wide Q4_0
// row takes 8 lanes, so a 128-lane workgroup reduces 16 rows at once; a
// row of 8192 a whole 32-lane subgroup), one row per team pass, and up to
// 8 tokens per pass for prefill (4 for the 256-weight units, whose
// unrolled body is 8x longer). nt, when not 0, is a test's choice.
func (d *gpu) planIntDot(t ggml.Type, units, tokens, nt int) idPlan {
	wg, sg := d.teamGeometry()
	want := (units + idUnitsPerLane(t) - 1) / idUnitsPerLane(t)
	lpr := 1
	for lpr < want && lpr < int(sg) {
		lpr *= 2
	}
	if nt == 0 {
		nt = 1
		if tokens > 1 {
			nt = 8
			if layouts[t].unit > 32 {
				nt = 4
			}
		}
	}
	return idPlan{wg: wg, lpr: lpr, teams: wg / lpr, nt: nt, rpg: wg / lpr}
}

// actForm names the rounded form of x a weight type's mat-vec reads: the
// vec_dot_type with its unit and sub-block (the sums XQ holds), so that
// inputs rounded for one type serve another with the same form (Q4_0 and
// Q8_0 both read Q8_0 blocks of 32).
func actForm(t ggml.Type) string {
	q81 := t == ggml.Q4_1 || t == ggml.Q5_1
	return fmt.Sprintf("%d/%d/%v", layouts[t].unit, subBlock(t), q81)
}

// xqMemo is the last quantize dispatch of a recording: which input it
// rounded, how, and where, and the recorder's mark right after it. A
// mat-vec reading the same input in the same form reuses it while neither
// the input, its norm weight nor the scratch has been written since.
type xqMemo struct {
	r              *vulkan.Recorder
	mark           uint64
	x, norm, xq    *vulkan.Buffer
	xstride, units int
	tokens         int
	eps            float32
	form           string
}

// newXQMemo is the memo of rounding op's input for tokens tokens in form
// (the norm's eps only where there is a norm).
func newXQMemo(r *vulkan.Recorder, op *matvecOp, tokens int, form string) xqMemo {
	key := xqMemo{r: r, x: op.x, norm: op.norm, xq: op.xq, xstride: op.xstride, units: op.m.Units, tokens: tokens, eps: op.eps, form: form}
	if op.norm == nil {
		key.eps = 0
	}
	return key
}

// xqHolds reports whether the last quantize dispatch (d.xqLast) rounded
// key's input the same way into the same scratch in this recording, and
// neither the input, its norm weight nor the scratch was written since.
func (d *gpu) xqHolds(key xqMemo) bool {
	last := d.xqLast
	mark := last.mark
	last.mark = key.mark
	r := key.r
	return last == key && !r.WrittenSince(key.x, mark) && !r.WrittenSince(key.xq, mark) && (key.norm == nil || !r.WrittenSince(key.norm, mark))
}

// useIntDot reports whether op takes the integer-dot kernel: on a layout
// that asks for it (tuning.intDot) and a device with
// shaderIntegerDotProduct (enabled at device creation wherever reported),
// for a dense mat-vec of quantized weights with x rounded to 8 bits and a
// scratch for the rounded x large enough for the batch. Expert mat-vecs
// and f32 x keep the float kernels; so does split K's second epilogue,
// which this kernel never needs.
func (d *gpu) useIntDot(op *matvecOp) bool {
	if !d.tune.intDot || !d.Info.Features.IntegerDot || op.xq == nil || op.moe.ids != nil || op.f32x || op.epi == epiSwiGLU2 {
		return false
	}
	t := op.m.Type
	if !t.Quantized() || (op.m2 != nil && op.m2.Type != t) {
		return false
	}
	if _, ok := layouts[t]; !ok {
		return false
	}
	tw := xqWords(t, op.m.Units, false)
	return uint64(4*tw*max(op.tokens, 1)) <= op.xq.Size
}

// quantizeX records the rounding of op's input into op.xq unless the last
// one of this recording already holds it.
func (d *gpu) quantizeX(r *vulkan.Recorder, op matvecOp, tw int) error {
	key := newXQMemo(r, &op, op.tokens, actForm(op.m.Type))
	if d.xqHolds(key) {
		return nil
	}
	if err := d.matmulQuant(r, op, tw, nil); err != nil {
		return err
	}
	key.mark = r.Mark()
	d.xqLast = key
	return nil
}

// matvecIntDot records op with the integer-dot kernel: the quantize
// dispatch where the input is not rounded yet, then one dispatch per part
// of the matrix (a pair is one dispatch: gate and up read the same x).
func (d *gpu) matvecIntDot(r *vulkan.Recorder, op matvecOp) error {
	m := op.m
	l := layouts[m.Type]
	if op.xstride%4 != 0 || op.xstride < m.Units*l.unit {
		return fmt.Errorf("%s: x stride %d does not hold a row of %d units", op.label, op.xstride, m.Units)
	}
	tw := xqWords(m.Type, m.Units, false)
	if need := uint64(4 * tw * max(op.tokens, 1)); need > op.xq.Size {
		return fmt.Errorf("%s: rounded x of %d tokens needs %d bytes, the scratch buffer has %d", op.label, op.tokens, need, op.xq.Size)
	}
	if err := d.quantizeX(r, op, tw); err != nil {
		return fmt.Errorf("%s: rounding x: %w", op.label, err)
	}
	pl := d.planIntDot(m.Type, m.Units, op.tokens, op.nt)
	op.nt = pl.nt
	spec := []uint32{uint32(pl.wg), uint32(pl.lpr), uint32(pl.nt), uint32(op.epi), flag(op.m2 != nil), op.act, uint32(pl.teams), op.biasRows()}
	k, ropeArgs, ropePush, err := d.matvecKernel(&op, "matvec_id_", 8*4, spec)
	if err != nil {
		return err
	}
	e, err := d.epilogueBuffers(&op)
	if err != nil {
		return err
	}
	dum, bias, bias2, gelu := e.dum, e.bias, e.bias2, e.gelu
	for pi, part := range m.parts {
		args := weightArgs(make([]vulkan.Arg, 0, 21), op, pi, dum)
		args = append(args, vulkan.R(op.xq), vulkan.Arg{B: op.xq, Format: fmtU32}, vulkan.R(bias), op.yArg(part), vulkan.R(op.step), vulkan.R(bias2), gelu)
		args = append(args, ropeArgs...)
		groups, rpg := sgGroups(part.rows, pl.rpg, pl.teams, int(d.Info.Limits.MaxWorkGroupCount[0]))
		tg := (max(op.tokens, 1) + op.nt - 1) / op.nt
		if op.last {
			tg = 1
		}
		push := []uint32{uint32(part.rows), uint32(m.Units), uint32(op.ystride), uint32(op.yoff + part.row0), flag(op.last), uint32(part.row0), uint32(rpg), uint32(tw)}
		push = append(push, ropePush...)
		label := op.label
		if op.rope != nil {
			label += " + rope"
		}
		if len(m.parts) > 1 {
			label = fmt.Sprintf("%s part %d", label, pi)
		}
		if err := r.Dispatch(label, k, args, push, uint32(groups), uint32(tg), 1); err != nil {
			return err
		}
		op.work(r, part.buf.Size, uint64(part.rows)*uint64(m.Cols)) // no expert rows here (useIntDot)
	}
	return nil
}
