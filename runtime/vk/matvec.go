package vk

import (
	"fmt"

	"math"
	"strings"
	"vkchat/runtime/ggml"
)

// Epilogues of the mat-vec kernel (its EPI constant).
const (
	epiStore    = 0
	epiResidual = 1 // y += W·x
	epiBias     = 2 // y = W·x + bias
	epiSwiGLU   = 3 // y = silu(y)·(W·x): up after a separate gate
)

// matvecOp is one use of the mat-vec kernel: y[tok][yoff+row] (epilogue)
// W·norm(x[tok]) for the tokens of the step, nt at a time.
type matvecOp struct {
	label   string
	m, m2   *Matrix // m2: the up matrix of a fused gate/up (PAIR)
	x       *Buffer // f32 activations, xstride floats per token
	xstride int
	norm    *Buffer // RMSNorm weight (padded to whole units), or nil
	eps     float32
	bias    *Buffer
	y       *Buffer
	ystride int
	yoff    int
	epi     int
	nt      int // tokens per pass (kernel constant)
	groups  int // token groups to dispatch (ceil(batch capacity / nt))
	last    bool
	step    *Buffer
}

// matvecShape is the team shape for a matrix with units per row.
// rb is how many rows a team computes per pass: as many as it has lanes
// for small units (fewest shuffles and stores per row), fewer for the
// 256-weight K-quant units whose unrolled code would otherwise be huge.
func (d *Device) matvecShape(t ggml.Type, units int) (lpr, nu, rb int) {
	lpr = 1
	for lpr < units && lpr < 8 && lpr < int(max(d.Info.SubgroupSize, 1)) {
		lpr *= 2
	}
	nu = (units + lpr - 1) / lpr
	rb = lpr
	if layouts[t].unit > 32 {
		rb = min(lpr, 2)
	}
	if testRB > 0 {
		rb = min(lpr, testRB)
	}
	return lpr, nu, rb
}

// mvWorkgroup is the mat-vec workgroup size: several teams share a
// workgroup so that small matrices still make few, busy workgroups.
const mvWorkgroup = 32

// mvPasses is how many row passes a team makes after loading its slice of
// x once; more amortises that load, fewer spreads the work.
const mvPasses = 4

// testKernelOverride lets exploration tests time kernel variants.
var testKernelOverride string

var testRB = 0

func (d *Device) dummy() (*Buffer, error) {
	if d.scratch0 == nil {
		b, err := d.NewBuffer("unused binding", 256, memDevice)
		if err != nil {
			return nil, err
		}
		d.scratch0 = b
	}
	return d.scratch0, nil
}

func wtypeName(m *Matrix) string { return strings.ToLower(m.Type.String()) }

func (r *Recorder) matvec(op matvecOp) error {
	d := r.d
	m := op.m
	if op.m2 != nil && (op.m2.Type != m.Type || op.m2.Rows != m.Rows || op.m2.Cols != m.Cols || len(op.m2.parts) != len(m.parts)) {
		return fmt.Errorf("%s: paired matrices %s and %s differ in type or shape", op.label, m.Name, op.m2.Name)
	}
	l := layouts[m.Type]
	if op.xstride%l.unit != 0 && op.xstride%32 != 0 {
		return fmt.Errorf("%s: x stride %d is not a whole number of units", op.label, op.xstride)
	}
	lpr, nu, rb := d.matvecShape(m.Type, m.Units)
	flag := func(b bool) uint32 {
		if b {
			return 1
		}
		return 0
	}
	kname := "matvec_" + wtypeName(m)
	if testKernelOverride != "" {
		kname = testKernelOverride
	}
	k, err := d.Kernel(kname, 9*4, mvWorkgroup, uint32(lpr), uint32(nu), uint32(op.nt), uint32(op.epi), flag(op.norm != nil), flag(op.m2 != nil), uint32(rb))
	if err != nil {
		return err
	}
	dum, err := d.dummy()
	if err != nil {
		return err
	}
	nw, bias := op.norm, op.bias
	if nw == nil {
		nw = dum
	}
	if bias == nil {
		bias = dum
	}
	teams := mvWorkgroup / lpr
	for pi, part := range m.parts {
		args := make([]Arg, 0, 13)
		for i := 0; i < 4; i++ {
			if i < len(part.views) {
				args = append(args, part.views[i])
			} else {
				args = append(args, Arg{B: dum})
			}
		}
		for i := 0; i < 4; i++ {
			if op.m2 != nil && i < len(part.views) {
				args = append(args, op.m2.parts[pi].views[i])
			} else {
				args = append(args, Arg{B: dum})
			}
		}
		args = append(args, R(op.x), R(nw), R(bias), W(op.y), R(op.step))
		if op.epi == epiResidual || op.epi == epiSwiGLU {
			// read-modify-write of y
			args[11].Write = true
		}
		perGroup := teams * rb // rows per workgroup pass
		groups := (part.rows + perGroup*mvPasses - 1) / (perGroup * mvPasses)
		groups = max(groups, min((part.rows+perGroup-1)/perGroup, 4))
		tg := op.groups
		if op.last {
			tg = 1
		}
		push := []uint32{uint32(part.rows), uint32(m.Units), uint32(op.xstride), uint32(op.ystride), uint32(op.yoff + part.row0), flag(op.last), uint32(m.Cols), math.Float32bits(op.eps), uint32(part.row0)}
		label := op.label
		if len(m.parts) > 1 {
			label = fmt.Sprintf("%s part %d", op.label, pi)
		}
		if err := r.Dispatch(label, k, args, push, uint32(groups), uint32(tg), 1); err != nil {
			return err
		}
		r.readBytes(part.buf.Size)
		if op.m2 != nil {
			r.readBytes(op.m2.parts[pi].buf.Size)
		}
	}
	return nil
}
