package vk

import (
	"fmt"

	"math"
	"strings"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// Epilogues of the mat-vec kernel (its EPI constant).
const (
	epiStore    = 0
	epiResidual = 1 // y += W·x
	epiBias     = 2 // y = W·x + bias
	epiSwiGLU   = 3 // y = silu(y)·(W·x): up after a separate gate
	epiSwiGLU2  = 4 // y = silu(y)·(W·x + y2): the last chunk of a split up
)

// actGELU is the kernels' ACT for GELU-tanh: the gate reads the GELU table
// (gpu.geluArg).
const actGELU = 1

// matvecOp is one use of the mat-vec kernel: y[tok][yoff+row] (epilogue)
// W·norm(x[tok]) for the tokens of the step, nt at a time.
type matvecOp struct {
	label   string
	m, m2   *Matrix        // m2: the up matrix of a fused gate/up (PAIR)
	x       *vulkan.Buffer // f32 activations, xstride floats per token
	xstride int
	norm    *vulkan.Buffer // RMSNorm weight (padded to whole units), or nil
	eps     float32
	bias    *vulkan.Buffer // epiBias's (read by no other epilogue)
	// rbias: bias rows added to the product ahead of the activation and
	// the epilogue (the kernel's BIAS): a gpt-oss expert's gate, up or down
	// bias, with moe the pair's expert's row, or its attention output bias
	// before the residual add. rbias2 is m2's; a pair has both or neither.
	rbias, rbias2 *vulkan.Buffer
	y             *vulkan.Buffer
	y2            *vulkan.Buffer // scratch shaped like y, for an up projection split over K
	ystride       int
	yoff          int
	epi           int
	tokens        int // batch capacity: tokens the dispatch covers
	nt            int // tokens per pass (kernel constant); 0 chooses by type
	last          bool
	step          *vulkan.Buffer
	f32x          bool   // keep x in f32 instead of rounding it to the weight type's vec_dot_type (tests)
	act           uint32 // the gate's activation (matvec.comp's ACT): 0 SiLU, actGELU (GELU-tanh), 2 swiglu_oai
	moe           moeRows
	// xq: scratch for x rounded once per product (matmul.go); with it a
	// multi-token dense product takes the tiled kernel
	xq *vulkan.Buffer
	// rowByRow: F32 rows summed in ggml_vec_dot_f32's order whatever
	// their length, as the CPU backend sums a routed expert's
	// (quant.Matrix.RowByRow: llama.cpp's MUL_MAT_ID); see f32Order
	rowByRow bool
	// rope: the rotation and cache write of the Q|K|V rows op makes, as
	// its epilogue where fusesRope allows, else a rope.comp dispatch after
	// it (rope.go)
	rope *ropeOp
}

// moeRows makes a mat-vec an expert mat-vec (matvec.comp's MOE): m (and
// m2) are expert banks of experts runs of rows each, and the dispatch
// computes, for each of the step's tokens × k (token, slot) pairs, the
// rows of the expert ids names for the pair, one pair per pass; y is per
// pair. The zero value is a dense mat-vec.
type moeRows struct {
	ids     *vulkan.Buffer // expert id per pair (moe_route.comp's output)
	k       int            // experts per token
	experts int            // runs of rows in the bank
	perPair bool           // x per pair (down: the pair's h), not per token (gate/up)
}

// mode is matvec.comp's MOE constant.
func (m moeRows) mode() uint32 {
	switch {
	case m.ids == nil:
		return 0
	case m.perPair:
		return 2
	}
	return 1
}

// biasRows is the mat-vec kernels' BIAS constant: op's bias added to the
// product ahead of the epilogue (epiBias adds its own).
func (op *matvecOp) biasRows() uint32 { return flag(op.rbias != nil) }

// biasArgs is what a mat-vec binds as its bias buffers (unused: dum):
// epiBias's or the BIAS rows (one binding serves both), and m2's rows.
func (op *matvecOp) biasArgs(dum *vulkan.Buffer) (*vulkan.Buffer, *vulkan.Buffer, error) {
	b1, b2 := op.bias, op.rbias2
	if op.rbias != nil {
		if op.epi == epiBias {
			return nil, nil, fmt.Errorf("%s: bias rows and a bias epilogue both", op.label)
		}
		b1 = op.rbias
	}
	if (op.rbias2 != nil) != (op.rbias != nil && op.m2 != nil) {
		return nil, nil, fmt.Errorf("%s: a paired mat-vec adds bias rows to both products or to neither", op.label)
	}
	if b1 == nil {
		b1 = dum
	}
	if b2 == nil {
		b2 = dum
	}
	return b1, b2, nil
}

// yArg is a mat-vec dispatch's output binding for part: written (the
// recorder orders a read-modify-write epilogue as any write), and for one
// dense token only the part's rows, so that separate Q, K and V mat-vecs
// into one buffer touch disjoint spans and need no barrier between them.
func (op *matvecOp) yArg(part matPart) vulkan.Arg {
	y := vulkan.W(op.y)
	if op.tokens == 1 && op.moe.ids == nil {
		row := uint64(op.yoff + part.row0)
		y.Span = [2]uint64{4 * row, 4 * (row + uint64(part.rows))}
	}
	return y
}

// epilogueBuffers are what a mat-vec kernel binds beside its weights and
// x, the same for each kernel family: the unused bindings' buffer, each
// product's bias (biasArgs) and the GELU table (geluArg).
type epilogueBuffers struct {
	dum, bias, bias2 *vulkan.Buffer
	gelu             vulkan.Arg
}

func (d *gpu) epilogueBuffers(op *matvecOp) (epilogueBuffers, error) {
	var e epilogueBuffers
	var err error
	if e.dum, err = d.dummy(); err != nil {
		return e, err
	}
	if e.bias, e.bias2, err = op.biasArgs(e.dum); err != nil {
		return e, err
	}
	e.gelu, err = d.geluArg(op.act == actGELU)
	return e, err
}

// work counts on r what a dispatch of op over bytes of weights with macs
// multiply-adds reads and does: an expert product's share of the bank
// (moeRows.work), twice for a pair.
func (op *matvecOp) work(r *vulkan.Recorder, bytes, macs uint64) {
	bytes, macs = op.moe.work(bytes, macs, op.tokens)
	r.Work(bytes, macs)
	if op.m2 != nil {
		r.Work(bytes, macs)
	}
}

// k1 is matvec.comp's MOEK: 1 for a dense mat-vec.
func (m moeRows) k1() int { return max(m.k, 1) }

// rows is the rows one dispatch of part computes: an expert's run for an
// expert mat-vec (a bank is one part), else the part's.
func (m moeRows) rows(part matPart) int {
	if m.ids != nil {
		return part.rows / m.experts
	}
	return part.rows
}

// dispatchTokens is what the kernel counts as tokens: the (token, slot)
// pairs of an expert mat-vec.
func (m moeRows) dispatchTokens(tokens int) int { return tokens * m.k1() }

// check refuses an expert mat-vec the kernel cannot run: a bank split into
// parts (the row offset is within one binding) or rows not a whole number
// of experts.
func (m moeRows) check(label string, mats ...*Matrix) error {
	if m.ids == nil {
		return nil
	}
	for _, mat := range mats {
		if mat == nil {
			continue
		}
		if m.k <= 0 || m.experts <= 0 || mat.Rows%m.experts != 0 {
			return fmt.Errorf("%s: bank %s of %d rows is not %d experts' runs", label, mat.Name, mat.Rows, m.experts)
		}
		if len(mat.parts) != 1 {
			return fmt.Errorf("%s: expert bank %s needs %d parts on this device, and the expert mat-vec reads one: %w", label, mat.Name, len(mat.parts), backend.ErrUnsupported)
		}
	}
	return nil
}

// f32Order is matvec.comp's ORDER for op, the order the CPU backend sums
// F32 rows in, so that the kernel gives the CPU's bits, decode and prefill
// alike: 1, ggml_vec_dot_f32's, as llama.cpp's CPU backend does whatever
// the batch (a routed expert's rows, MUL_MAT_ID, and rows not a multiple
// of 8 long); 2, tinyBLAS's, for the other F32 products of a model whose
// matrices are all F32 (Matrix.cpuOrder; llama.cpp's order for a batch,
// which the CPU backend keeps for a single token too, so that a batch and
// its steps give the same bits); 0 for the rest, summed in the kernel's
// own order.
func (op *matvecOp) f32Order() uint32 {
	switch {
	case op.m.Type != ggml.F32:
		return 0
	case op.rowByRow || op.m.Cols%8 != 0:
		return 1
	case op.m.cpuOrder:
		return 2
	}
	return 0
}

// orderedPlan is the register kernel's layout of op in its F32 order
// (f32Order): a lane per row, which sees the row in order, one token a
// pass (matvec.comp's ordered_dot loops over one token's x), in one chunk
// of K. False for other types, and where the row's x does not fit
// the kernel's register budget in one chunk: the mat-vec then sums in its
// own order (a chunk's partial sums would be added in another order
// anyway). The GPU layout's shared-x kernel (matvec_shared.go) sums F32
// rows in its own order too: it runs ahead of this where it takes op.
func (d *gpu) orderedPlan(op *matvecOp) (mvPlan, bool) {
	if op.f32Order() == 0 {
		return mvPlan{}, false
	}
	mats := 1
	if op.m2 != nil {
		mats = 2
	}
	units := op.m.Units
	return mvPlan{lpr: 1, nu: units, chunks: 1, rb: 1, nt: 1}, units*32*mats <= d.tune.mvBudget
}

// mvPlan is how one mat-vec is laid out: lanes per row, units per lane per
// chunk of K, chunks of K (separate dispatches that accumulate), rows per
// team pass and tokens per pass.
type mvPlan struct {
	lpr, nu, chunks, rb, nt int
}

// plan lays out a matrix with units per row for a batch of tokens (1:
// decode), paired with a second matrix or not. Prefill takes up to 8 tokens
// per pass (each dequantized weight serves them all), fewer where the
// budget demands and the tuning allows; past that K is split into chunks.
func (d *gpu) plan(t ggml.Type, units, tokens int, pair bool) mvPlan {
	lpr := 1
	for lpr < units && lpr < 8 && lpr < int(d.Info.SureSubgroup()) {
		lpr *= 2
	}
	unit := layouts[t].unit
	// As many rows per pass as lanes with small units (fewest shuffles and
	// stores per row: several times faster than one row per pass, for one
	// token and for eight; docs/benchmarks.md, "vk: rows per mat-vec pass
	// (matvec.go, plan)"); fewer for the 256-weight K-quant units.
	rb := lpr
	cost := unit // per unit, token and matrix
	if unit > 32 {
		rb = min(lpr, 2)
		cost = 2 * unit // the K-quant dequantization is heavier code
	}
	mats := 1
	if pair {
		mats = 2
	}
	perLane := (units + lpr - 1) / lpr
	nt := 1
	if tokens > 1 {
		nt = 8
	}
	budget := d.tune.mvBudget
	for nt > max(d.tune.prefillNT, 1) && rb*perLane*cost*nt*mats > budget {
		nt /= 2
	}
	p := mvPlan{lpr: lpr, nu: perLane, chunks: 1, rb: rb, nt: nt}
	if rb*perLane*cost*nt*mats > budget {
		maxNU := max(1, budget/(rb*cost*nt*mats))
		p.chunks = (perLane + maxNU - 1) / maxNU
		p.nu = (perLane + p.chunks - 1) / p.chunks
	}
	return p
}

// mvWorkgroup is the mat-vec workgroup size: several teams share a
// workgroup so that small matrices still make few, busy workgroups.
const mvWorkgroup = 32

// weightArgs appends a mat-vec's eight weight bindings to args: part pi's
// views of op's matrix (A0..A3) and, for a pair, of op.m2 (B0..B3), the
// unused ones bound to dum.
func weightArgs(args []vulkan.Arg, op matvecOp, pi int, dum *vulkan.Buffer) []vulkan.Arg {
	part := op.m.parts[pi]
	for i := 0; i < 4; i++ {
		if i < len(part.views) {
			args = append(args, part.views[i])
		} else {
			args = append(args, vulkan.Arg{B: dum})
		}
	}
	for i := 0; i < 4; i++ {
		if op.m2 != nil && i < len(part.views) {
			args = append(args, op.m2.parts[pi].views[i])
		} else {
			args = append(args, vulkan.Arg{B: dum})
		}
	}
	return args
}

// work scales a bank's bytes and multiply-adds to what an expert product
// of tokens tokens does: it reads at most k experts' rows per token (a
// decode step reads k of the bank's experts), at most the whole bank, and
// makes k experts' multiply-adds per token (per token, as Recorder.Work
// counts them for every product: the prefill profile multiplies by the
// chunk's tokens).
func (m moeRows) work(bytes, macs uint64, tokens int) (uint64, uint64) {
	if m.ids == nil {
		return bytes, macs
	}
	used := uint64(min(m.dispatchTokens(max(tokens, 1)), m.experts))
	return bytes / uint64(m.experts) * used, macs / uint64(m.experts) * uint64(m.k1())
}

func wtypeName(m *Matrix) string { return strings.ToLower(m.Type.String()) }

// matvec records op: with the shared-x kernel (matvec_shared.go) where the
// tuning asks for it and x fits in shared memory, else with the register
// kernel. With nt 0 the token count per pass is chosen for the weight type
// from the batch (1 for a single token, else up to 8).
func (d *gpu) matvec(r *vulkan.Recorder, op matvecOp) error {
	m := op.m
	if err := op.moe.check(op.label, op.m, op.m2); err != nil {
		return err
	}
	if d.useExact(&op) {
		// the CPU backend's bits (matvec_exact.go); the rotation after
		ro := op.rope
		op.rope = nil
		if err := d.matvecExact(r, op); err != nil || ro == nil {
			return err
		}
		return d.rope(r, ro, op.y, op.step, op.tokens)
	}
	if op.rope != nil && !d.fusesRope(&op) {
		ro := op.rope
		op.rope = nil
		if err := d.matvec(r, op); err != nil {
			return err
		}
		return d.rope(r, ro, op.y, op.step, op.tokens)
	}
	if d.useMatmul(&op) {
		return d.matmul(r, op)
	}
	if op.m2 != nil && (op.m2.Type != m.Type || op.m2.Rows != m.Rows || op.m2.Cols != m.Cols || len(op.m2.parts) != len(m.parts)) {
		return fmt.Errorf("%s: paired matrices %s and %s differ in type or shape", op.label, m.Name, op.m2.Name)
	}
	if d.useIntDot(&op) {
		return d.matvecIntDot(r, op)
	}
	// An expert mat-vec takes one pair per pass: each has its own rows.
	tokens := op.tokens
	if op.moe.ids != nil {
		tokens, op.nt = 1, 1
	}
	if d.tune.sharedX {
		if sp, ok := d.planShared(m.Type, m.Units, tokens, op.nt, op.f32x); ok {
			return d.matvecShared(r, op, sp)
		}
		// x does not fit in shared memory even one token at a time:
		// the register kernel, splitting K as its budget demands
	}
	if pl, ok := d.orderedPlan(&op); ok {
		op.nt = pl.nt // whatever a test chose: the kernel's ORDER takes one token a pass
		return d.matvecChunk(r, op, pl, 0)
	}
	pl := d.plan(m.Type, m.Units, tokens, op.m2 != nil)
	if op.nt != 0 {
		pl.nt = op.nt // a test's choice
	}
	op.nt = pl.nt
	if pl.chunks == 1 {
		return d.matvecChunk(r, op, pl, 0)
	}
	if op.m2 != nil {
		// silu needs whole sums: gate and up separately, up finishing with
		// the SwiGLU epilogue.
		gate, up := op, op
		gate.m2, gate.label, gate.epi, gate.rbias2 = nil, op.label+" (gate)", epiStore, nil
		up.m, up.m2, up.label, up.epi, up.rbias, up.rbias2 = op.m2, nil, op.label+" (up)", epiSwiGLU, op.rbias2, nil
		if err := d.matvec(r, gate); err != nil {
			return err
		}
		return d.matvec(r, up)
	}
	chunks := pl.chunks
	for c := 0; c < chunks; c++ {
		cop := op
		if c > 0 {
			// the bias rows join the first chunk's partial sum only
			cop.rbias, cop.rbias2 = nil, nil
		}
		switch {
		case op.epi == epiSwiGLU && c < chunks-1:
			// partial sums of up go to y2 until the last chunk
			if op.y2 == nil {
				return fmt.Errorf("%s: splitting K of %s needs a scratch buffer", op.label, m.Name)
			}
			cop.y, cop.epi = op.y2, epiStore
			if c > 0 {
				cop.epi = epiResidual
			}
		case op.epi == epiSwiGLU:
			cop.epi = epiSwiGLU2
		case c > 0:
			cop.epi = epiResidual
		}
		if err := d.matvecChunk(r, cop, pl, c); err != nil {
			return err
		}
	}
	return nil
}

// matvecChunk records the dispatches (one per part of the matrix) for
// chunk c of K.
func (d *gpu) matvecChunk(r *vulkan.Recorder, op matvecOp, pl mvPlan, c int) error {
	m := op.m
	l := layouts[m.Type]
	if op.xstride%l.unit != 0 && op.xstride%32 != 0 {
		return fmt.Errorf("%s: x stride %d is not a whole number of units", op.label, op.xstride)
	}
	lpr, nu, rb, chunks := pl.lpr, pl.nu, pl.rb, pl.chunks
	u0 := c * lpr * nu
	cu := min(lpr*nu, m.Units-u0)
	norm := uint32(0)
	if op.norm != nil {
		norm = 1
		if chunks > 1 {
			norm = 2 // the RMS needs the whole row, not this chunk of it
		}
	}
	order := uint32(0)
	if lpr == 1 && rb == 1 && chunks == 1 && nu == m.Units && op.nt == 1 {
		order = op.f32Order() // orderedPlan's layout
	}
	k, err := d.kernel("matvec_"+wtypeName(m), 11*4, mvWorkgroup, uint32(lpr), uint32(nu), uint32(op.nt), uint32(op.epi), norm, flag(op.m2 != nil), uint32(rb), flag(!op.f32x), op.act, op.moe.mode(), uint32(op.moe.k1()), op.biasRows(), order)
	if err != nil {
		return err
	}
	e, err := d.epilogueBuffers(&op)
	if err != nil {
		return err
	}
	dum, bias, bias2, gelu := e.dum, e.bias, e.bias2, e.gelu
	nw, y2, ids := op.norm, op.y2, op.moe.ids
	if nw == nil {
		nw = dum
	}
	if ids == nil {
		ids = dum
	}
	if y2 == nil {
		y2 = dum
	}
	teams := mvWorkgroup / lpr
	for pi, part := range m.parts {
		args := weightArgs(make([]vulkan.Arg, 0, 16), op, pi, dum)
		args = append(args, vulkan.R(op.x), vulkan.R(nw), vulkan.R(bias), op.yArg(part), vulkan.R(op.step), vulkan.R(y2), vulkan.Arg{B: ids, Format: fmtU32}, vulkan.R(bias2), gelu)
		rows := op.moe.rows(part)
		perGroup := teams * rb // rows per workgroup pass
		passes := d.tune.mvPasses(op.nt)
		groups := (rows + perGroup*passes - 1) / (perGroup * passes)
		groups = max(groups, min((rows+perGroup-1)/perGroup, 4))
		tg := (max(op.moe.dispatchTokens(op.tokens), 1) + op.nt - 1) / op.nt
		if op.last {
			tg = 1
		}
		push := []uint32{uint32(rows), uint32(m.Units), uint32(op.xstride), uint32(op.ystride), uint32(op.yoff + part.row0), flag(op.last), uint32(m.Cols), math.Float32bits(op.eps), uint32(part.row0), uint32(u0), uint32(cu)}
		label := op.label
		if len(m.parts) > 1 {
			label = fmt.Sprintf("%s part %d", label, pi)
		}
		if chunks > 1 {
			label = fmt.Sprintf("%s k%d/%d", label, c+1, chunks)
		}
		if err := r.Dispatch(label, k, args, push, uint32(groups), uint32(tg), 1); err != nil {
			return err
		}
		macs := uint64(part.rows) * uint64(cu*l.unit)
		if cu*l.unit > m.Cols {
			macs = uint64(part.rows) * uint64(m.Cols) // the padding of float rows
		}
		// a chunk of K streams its share of the part
		bytes := part.buf.Size * uint64(cu) / uint64(m.Units)
		op.work(r, bytes, macs)
	}
	return nil
}
