package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"
)

type mvCase struct {
	typ        ggml.Type
	rows, cols int
	ntok, nt   int
	norm       bool
	epi        int
}

// runMatvec runs one mat-vec case on the device and on the reference
// (quant.DotRow, and a plain loop for the norm and epilogue), returning the
// NMSE and whether any sentinel outside the outputs was overwritten.
func runMatvec(t *testing.T, d *Device, c mvCase, rng *rand.Rand) (float64, int) {
	t.Helper()
	w := randomWeights(t, c.typ, c.rows, c.cols, rng)
	m, err := d.UploadMatrix("w", c.typ, c.rows, c.cols, w)
	if err != nil {
		t.Fatal(err)
	}
	l := layouts[c.typ]
	xstride := l.unitsPerRow(c.cols) * l.unit
	x := make([]float32, c.ntok*xstride)
	for tk := 0; tk < c.ntok; tk++ {
		copy(x[tk*xstride:], randomVec(c.cols, rng))
	}
	xb, _ := d.NewBuffer("x", uint64(4*len(x)), memDevice)
	xb.Write(0, f32bytes(x))
	var nwb *Buffer
	nw := randomVec(xstride, rng)
	for i := c.cols; i < xstride; i++ {
		nw[i] = 0
	}
	if c.norm {
		nwb, _ = d.NewBuffer("nw", uint64(4*len(nw)), memDevice)
		nwb.Write(0, f32bytes(nw))
	}
	bias := randomVec(c.rows, rng)
	biasb, _ := d.NewBuffer("bias", uint64(4*len(bias)), memDevice)
	biasb.Write(0, f32bytes(bias))
	// y has a sentinel-filled gap of 5 before and after each token's rows
	ystride := c.rows + 10
	y0 := randomVec(c.ntok*ystride, rng)
	for tk := 0; tk < c.ntok; tk++ {
		for i := 0; i < 5; i++ {
			y0[tk*ystride+i] = sentinel
			y0[tk*ystride+5+c.rows+i] = sentinel
		}
	}
	yb, _ := d.NewBuffer("y", uint64(4*len(y0)+64), memDevice)
	yb.Write(0, f32bytes(y0))
	step, _ := d.NewBuffer("step", 64, memHost)
	binary.LittleEndian.PutUint32(step.Mapped(), uint32(c.ntok))

	rec, err := d.NewRecorder(0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Begin()
	op := matvecOp{label: "test", m: m, x: xb, xstride: xstride, norm: nwb, eps: 1e-5, bias: biasb, y: yb, ystride: ystride, yoff: 5, epi: c.epi, nt: c.nt, groups: (c.ntok + c.nt - 1) / c.nt, step: step}
	if err := rec.matvec(op); err != nil {
		t.Fatal(err)
	}
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*len(y0))
	yb.Read(0, out)
	got := bytesF32(out)

	rowBytes, _ := c.typ.RowBytes(uint64(c.cols))
	var ref, res []float32
	bad := 0
	for tk := 0; tk < c.ntok; tk++ {
		xt := x[tk*xstride : tk*xstride+c.cols]
		if c.norm {
			var ss float64
			for _, v := range xt {
				ss += float64(v) * float64(v)
			}
			s := float32(1 / (sqrt(ss/float64(c.cols) + 1e-5)))
			xn := make([]float32, c.cols)
			for i := range xn {
				xn[i] = xt[i] * s * nw[i]
			}
			xt = xn
		}
		for r := 0; r < c.rows; r++ {
			v := quant.DotRow(c.typ, w[uint64(r)*rowBytes:uint64(r+1)*rowBytes], xt)
			switch c.epi {
			case epiResidual:
				v += y0[tk*ystride+5+r]
			case epiBias:
				v += bias[r]
			}
			ref = append(ref, v)
			res = append(res, got[tk*ystride+5+r])
		}
		for i := 0; i < 5; i++ {
			if !isSentinel(got[tk*ystride+i]) || !isSentinel(got[tk*ystride+5+c.rows+i]) {
				bad++
			}
		}
	}
	return nmse(ref, res), bad
}

func TestMatvecTypes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(1))
	for _, typ := range allTypes {
		for _, c := range []mvCase{
			{typ: typ, rows: 37, cols: 768, ntok: 1, nt: 1},
			{typ: typ, rows: 53, cols: 512, ntok: 11, nt: 8, epi: epiResidual},
			{typ: typ, rows: 19, cols: 256, ntok: 3, nt: 1, norm: true, epi: epiBias},
		} {
			t.Run(fmt.Sprintf("%s/%dx%d/tok%d/nt%d/norm%v/epi%d", typ, c.rows, c.cols, c.ntok, c.nt, c.norm, c.epi), func(t *testing.T) {
				e, bad := runMatvec(t, d, c, rng)
				if e > 5e-4 || bad > 0 {
					t.Errorf("NMSE %.3g (bound 5e-4), %d sentinels overwritten", e, bad)
				} else {
					t.Logf("NMSE %.3g", e)
				}
			})
		}
	}
}
