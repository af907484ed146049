package vk

import (
	"fmt"
	"math/rand"
	"testing"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// TestMatvecIntDot checks the integer-dot mat-vec (matvec_id.comp) for
// every quantized weight type against the CPU backend's quantized dot
// products (quant.MatVec): one token, with the norm folded into the
// quantize dispatch, a gate/up pair and the residual epilogue.
func TestMatvecIntDot(t *testing.T) {
	d := testDevice(t)
	if !d.Info.Features.IntegerDot {
		t.Skip("device without shaderIntegerDotProduct")
	}
	withTuning(t, d, gpuIntDot)
	rng := rand.New(rand.NewSource(23))
	for _, typ := range allTypes {
		if !typ.Quantized() {
			continue
		}
		unit := layouts[typ].unit
		for _, c := range []mvCase{
			{typ: typ, rows: 37, cols: 13 * 32 * max(1, unit/32), ntok: 1},
			{typ: typ, rows: 29, cols: 3 * unit, ntok: 1, norm: true, pair: true},
			{typ: typ, rows: 19, cols: 9 * unit, ntok: 1, epi: epiResidual},
		} {
			c.kernel, c.gemm = "matvec_id_", true
			t.Run(fmt.Sprintf("%s/%dx%d/norm%v/pair%v/epi%d", typ, c.rows, c.cols, c.norm, c.pair, c.epi), func(t *testing.T) {
				e, bad := runMatvec(t, d, c, rng)
				if e > 1e-10 || bad > 0 {
					t.Errorf("NMSE %.3g (bound 1e-10), %d sentinels overwritten", e, bad)
				} else {
					t.Logf("NMSE %.3g", e)
				}
			})
		}
	}
}

// TestMatvecIntDotChoice checks which layouts and devices take the kernel.
// gpuIntDot is the GPU layout with the integer-dot mat-vec on, as
// VKCHAT_VK_MATVEC=intdot sets it.
var gpuIntDot = func() tuning { t := gpuTuning; t.intDot = true; return t }()

func TestMatvecIntDotChoice(t *testing.T) {
	d := testDevice(t)
	xq, _ := d.NewBuffer("xq", 1<<16, vulkan.MemDevice)
	m := &Matrix{Type: ggml.Q4_0, Rows: 8, Cols: 256, Units: 8}
	f := &Matrix{Type: ggml.F16, Rows: 8, Cols: 256, Units: 256 / layouts[ggml.F16].unit}
	old := d.Info.Features.IntegerDot
	t.Cleanup(func() { d.Info.Features.IntegerDot = old })
	for _, c := range []struct {
		name string
		tu   tuning
		dot  bool
		op   matvecOp
		want bool
	}{
		{"gpu layout as shipped", gpuTuning, true, matvecOp{m: m, xq: xq, tokens: 1}, false},
		{"gpu layout, device dot", gpuIntDot, true, matvecOp{m: m, xq: xq, tokens: 1}, true},
		{"gpu layout, no device dot", gpuIntDot, false, matvecOp{m: m, xq: xq, tokens: 1}, false},
		{"cpu layout", cpuTuning, true, matvecOp{m: m, xq: xq, tokens: 1}, false},
		{"float weights", gpuIntDot, true, matvecOp{m: f, xq: xq, tokens: 1}, false},
		{"f32 x", gpuIntDot, true, matvecOp{m: m, xq: xq, tokens: 1, f32x: true}, false},
		{"no scratch", gpuIntDot, true, matvecOp{m: m, tokens: 1}, false},
		{"scratch too small", gpuIntDot, true, matvecOp{m: m, xq: xq, tokens: 1 << 12}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			withTuning(t, d, c.tu)
			d.Info.Features.IntegerDot = c.dot
			if got := d.useIntDot(&c.op); got != c.want {
				t.Errorf("useIntDot %v, want %v", got, c.want)
			}
		})
	}
}

// TestIntDotSharesRoundedX records q, k and v mat-vecs reading one normed
// x (as graph.go does for separate matrices): x must be rounded once, and
// again only after something writes x.
func TestIntDotSharesRoundedX(t *testing.T) {
	d := testDevice(t)
	if !d.Info.Features.IntegerDot {
		t.Skip("device without shaderIntegerDotProduct")
	}
	withTuning(t, d, gpuIntDot)
	rng := rand.New(rand.NewSource(7))
	const cols = 256
	var mats []*Matrix
	for i := 0; i < 3; i++ {
		m, err := d.uploadMatrix(fmt.Sprintf("w%d", i), ggml.Q4_0, 32, cols, randomWeights(t, ggml.Q4_0, 32, cols, rng))
		if err != nil {
			t.Fatal(err)
		}
		mats = append(mats, m)
	}
	buf := func(name string, n int) *vulkan.Buffer {
		b, err := d.NewBuffer(name, uint64(4*n), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x, nw, y, xq := buf("x", cols), buf("nw", cols), buf("y", 96), buf("xq", xqBound(cols))
	step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
	step.Mapped()[0] = 1
	rec, err := d.NewRecorder(64)
	if err != nil {
		t.Fatal(err)
	}
	rec.Begin()
	record := func() {
		for i, m := range mats {
			op := matvecOp{label: fmt.Sprintf("m%d", i), m: m, x: x, xstride: cols, norm: nw, eps: 1e-5, y: y, ystride: 96, yoff: 32 * i, tokens: 1, step: step, xq: xq}
			if err := d.matvec(rec, op); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func() (quant, mv int) {
		for _, k := range rec.Recorded() {
			if k.Kernel == "matmul_q4_0" {
				quant++
			} else if k.Kernel == "matvec_id_q4_0" {
				mv++
			}
		}
		return
	}
	record()
	if q, mv := count(); q != 1 || mv != 3 {
		t.Errorf("q, k, v: %d roundings of x and %d integer-dot mat-vecs, want 1 and 3", q, mv)
	}
	rec.Fill(vulkan.W(x), 0) // x changes: the next readers round it again
	record()
	if q, mv := count(); q != 2 || mv != 6 {
		t.Errorf("after x is written: %d roundings and %d mat-vecs, want 2 and 6", q, mv)
	}
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
}
