package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// The GPU layout's mat-vec (shaders/matvec_sg.comp): a workgroup stages x
// for every token of its pass in shared memory once, normalised and rounded
// to the weight's vec_dot_type, and teams of lanes (a whole subgroup for
// rows of that many units) reduce one row each. K is never split, so the
// down projection is one dispatch and gate/up one paired dispatch.

// sgPlan is how one shared-x mat-vec is laid out.
type sgPlan struct {
	wg, lpr, teams int
	nt             int
	words          int // shared words of staged x per token
	rpg            int // rows per workgroup
}

// sgWorkgroup is the shared-x mat-vec's workgroup size (where the device
// allows it): several teams read one staging of x, which costs K values per
// token for each workgroup.
const sgWorkgroup = 128

// sgRowsPerTeam is how many rows each team takes: the staging of x is
// shared by teams × this many rows (16 rows of a 2048-wide Q4_0 matrix
// stream 18 KiB of weights against 2.5 KiB of staged x), while a
// 2048-row matrix still makes 128 workgroups.
const sgRowsPerTeam = 2

// subBlock is the weight type's sub-block (shaders/types' SUBN): the
// granularity of the sums of x the kernel stages beside the values.
func subBlock(t ggml.Type) int {
	switch t {
	case ggml.Q2_K, ggml.Q3_K, ggml.Q6_K:
		return 16
	}
	return 32
}

// sgWords is the shared words one token's staged x takes (matvec_sg.comp's
// tw): int8 values with a scale per unit when x is rounded to an 8-bit
// vec_dot_type, else f32 values; and the sums per sub-block.
func sgWords(t ggml.Type, units int, f32x bool) int {
	unit := layouts[t].unit
	sums := units * (unit / subBlock(t))
	if t.Quantized() && !f32x {
		return units*unit/4 + units + sums
	}
	return units*unit + sums
}

// sharedBytes is the shared memory the kernel takes for the plan: x staged
// for nt tokens and a partial sum per team and token.
func (p sgPlan) sharedBytes() int { return 4 * (p.nt*p.words + p.nt*p.teams) }

// teamGeometry is the workgroup size of the team mat-vecs (shared-x and
// integer-dot) and the most lanes a team may span. A team reduces a row
// with shuffles over its lanes, which must be one subgroup: the size the
// pipeline is created to require (vulkan.Device.Kernel requests one from
// the workgroup size wherever the device allows), else the size every
// subgroup is sure to have; at most 64, as team_sum's butterfly has six
// levels.
func (d *gpu) teamGeometry() (wg int, sg uint32) {
	wg = sgWorkgroup
	if lim := int(d.Info.Limits.MaxWorkGroupSize); lim > 0 && lim < wg {
		wg = lim
	}
	sg = d.Info.SureSubgroup()
	if req, _ := d.Info.RequiredSubgroup(uint32(wg)); req > 0 {
		sg = req
	}
	return wg, min(sg, 64, uint32(wg))
}

// planShared lays out a shared-x mat-vec of a matrix with units per row for
// a batch of tokens (1: decode), or reports that x does not fit in shared
// memory even one token at a time (the caller then takes the register
// kernel, K split as its budget demands). nt, when not 0, is a test's
// choice of tokens per pass.
func (d *gpu) planShared(t ggml.Type, units, tokens, nt int, f32x bool) (sgPlan, bool) {
	wg, sg := d.teamGeometry()
	lpr := 1
	for lpr < units && lpr < int(sg) {
		lpr *= 2
	}
	teams := wg / lpr
	words := sgWords(t, units, f32x)
	fits := func(nt int) bool {
		return sgPlan{nt: nt, words: words, teams: teams}.sharedBytes() <= int(d.Info.Limits.MaxSharedMemory)
	}
	if nt == 0 {
		nt = 1
		if tokens > 1 {
			// as many tokens per pass as fit, up to the register
			// kernel's 8: each dequantized weight serves them all
			nt = 8
			for nt > 1 && !fits(nt) {
				nt /= 2
			}
		}
	}
	if !fits(nt) {
		return sgPlan{}, false
	}
	return sgPlan{wg: wg, lpr: lpr, teams: teams, nt: nt, words: words, rpg: teams * sgRowsPerTeam}, true
}

// matvecShared records op with the shared-x kernel: one dispatch per part
// of the matrix.
func (d *gpu) matvecShared(r *vulkan.Recorder, op matvecOp, pl sgPlan) error {
	m := op.m
	l := layouts[m.Type]
	if op.xstride%4 != 0 || op.xstride < m.Units*l.unit {
		return fmt.Errorf("%s: x stride %d does not hold a row of %d units", op.label, op.xstride, m.Units)
	}
	if op.epi == epiSwiGLU2 {
		return fmt.Errorf("%s: epilogue %d is for split K, which this kernel never does", op.label, op.epi)
	}
	op.nt = pl.nt
	spec := []uint32{uint32(pl.wg), uint32(pl.lpr), uint32(pl.nt), uint32(op.epi), flag(op.norm != nil), flag(op.m2 != nil), flag(!op.f32x), op.act, uint32(pl.teams), uint32(pl.nt * pl.words), op.moe.mode(), uint32(op.moe.k1()), op.biasRows()}
	e, err := d.epilogueBuffers(&op)
	if err != nil {
		return err
	}
	dum, bias, bias2, gelu := e.dum, e.bias, e.bias2, e.gelu
	k, ropeArgs, ropePush, err := d.matvecKernel(&op, "matvec_sg_", 10*4, spec)
	if err != nil {
		return err
	}
	nw, ids := op.norm, op.moe.ids
	if nw == nil {
		nw = dum
	}
	if ids == nil {
		ids = dum
	}
	for pi, part := range m.parts {
		args := weightArgs(make([]vulkan.Arg, 0, 22), op, pi, dum)
		args = append(args, vulkan.R(op.x), vulkan.R(nw), vulkan.R(bias), op.yArg(part), vulkan.R(op.step), vulkan.Arg{B: ids, Format: fmtU32}, vulkan.R(bias2), gelu)
		args = append(args, ropeArgs...)
		rows := op.moe.rows(part)
		groups, rpg := sgGroups(rows, pl.rpg, pl.teams, int(d.Info.Limits.MaxWorkGroupCount[0]))
		tg := (max(op.moe.dispatchTokens(op.tokens), 1) + op.nt - 1) / op.nt
		if op.last {
			tg = 1
		}
		push := []uint32{uint32(rows), uint32(m.Units), uint32(op.xstride), uint32(op.ystride), uint32(op.yoff + part.row0), flag(op.last), uint32(m.Cols), math.Float32bits(op.eps), uint32(part.row0), uint32(rpg)}
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
		op.work(r, part.buf.Size, uint64(part.rows)*uint64(m.Cols))
	}
	return nil
}

// sgGroups is the workgroup count and rows per workgroup for a part of
// rows rows: rpg rows each, more (whole team passes) where that would take
// more workgroups than the device allows in x (a 256k vocabulary at two
// teams per workgroup, as with 64-lane subgroups, would need 65536).
func sgGroups(rows, rpg, teams, maxGroups int) (groups, rows1 int) {
	if maxGroups > 0 && (rows+rpg-1)/rpg > maxGroups {
		rpg = (rows + maxGroups - 1) / maxGroups
		rpg = (rpg + teams - 1) / teams * teams
	}
	return (rows + rpg - 1) / rpg, rpg
}
