package vk

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"

	"vkchat/runtime/vk/vulkan"
)

// matmulExactNMSE bounds the tiled product against quant.MatVec where both
// sum the same integer products (x rounded to 8 bits, no norm): they
// differ only in the order the per-block terms are added.
const matmulExactNMSE = 1e-10

// TestMatmulTypes checks the tiled prefill product (matmul.comp) for every
// weight type against the CPU reference (quant.MatVec, which rounds x as
// llama.cpp does), under the CPU layout (x per lane) and the GPU layout (x
// staged in shared memory): rows and tokens not multiples of the tile, the
// residual epilogue, and (CPU layout) the fused norm with a gate/up pair
// and bias rows, whose up product ends in the SwiGLU epilogue.
// TestMatmulShapes covers the rest.
func TestMatmulTypes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(23))
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuTuning}} {
		for _, typ := range allTypes {
			// every case compiles its own pipelines, and the GPU layout's
			// (x read from shared memory in the unrolled body) take
			// llvmpipe 1-3 minutes each: there one type of each form of
			// x (int8 in units of 32 and of 256, f32), one case each
			if tu.name == "gpu" && typ != ggml.Q4_0 && typ != ggml.Q4_K && typ != ggml.F16 {
				continue
			}
			cases := []mvCase{{typ: typ, rows: 70, cols: 512, ntok: 40, epi: epiResidual}}
			if tu.name == "cpu" {
				cases = append(cases, mvCase{typ: typ, rows: 29, cols: 512, ntok: 9, norm: true, pair: true, rbias: true})
			}
			for _, c := range cases {
				c.gemm, c.kernel = true, "matmul_"
				exact := typ.Quantized() && !c.norm
				t.Run(fmt.Sprintf("%s/%s/%dx%d/tok%d/norm%v/pair%v/epi%d", tu.name, typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi), func(t *testing.T) {
					withTuning(t, d, tu.t)
					bound := matvecNMSE
					if exact {
						bound = matmulExactNMSE
					}
					e, bad := runMatvec(t, d, c, rng)
					if e > bound || bad > 0 {
						t.Errorf("NMSE %.3g (bound %.0e), %d sentinels overwritten", e, bound, bad)
					} else {
						t.Logf("NMSE %.3g", e)
					}
				})
			}
		}
	}
}

// TestMatmulShapes runs the tiled product on the shapes both mat-vec
// kernels handle (float rows that are not whole units, matrices split into
// parts, f32 x against float dequantization) and on a row longer than a
// mat-vec keeps in registers, with the GELU pair.
func TestMatmulShapes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(24))
	cases := []mvCase{
		{typ: ggml.Q4_0, rows: 21, cols: 5632, ntok: 17, norm: true, pair: true, gelu: true},
		{typ: ggml.Q8_0, rows: 13, cols: 1024, ntok: 5, epi: epiSwiGLU, oai: true},
	}
	for _, c := range shapeCases {
		if c.ntok == 1 {
			c.ntok = 6 // the tiled product is for batches
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		c.gemm, c.kernel = true, "matmul_"
		t.Run(fmt.Sprintf("%s/%dx%d/tok%d/norm%v/pair%v/epi%d/parts%d/f32x%v", c.typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi, c.partBytes, c.f32x), func(t *testing.T) {
			checkMatvec(t, d, c, rng)
		})
	}
}

// TestPrefillTakesMatmul checks that a prefill chunk on the CPU layout
// records every dense product of a Q4_0 model with the tiled kernel (the
// decode step keeps the mat-vec): the path eval's teacher-forced logits and
// the reference tests go through.
func TestPrefillTakesMatmul(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, cpuDeviceOrder)
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	shape := synth.Shapes["tiny"]
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := synth.Write(path, shape, synth.Options{Type: ggml.Q4_0, Vocab: vocab, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	vb, err := newTestBackend(d, loadModel(t, path), backend.Options{ContextSize: 64, Device: -1}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer vb.Close()
	rs, err := vb.recorders(2, true, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(rs, vb.graph.decode) {
		if len(r.Recorded()) == 0 {
			t.Fatal("a recorder listed no dispatches: nothing to check")
		}
	}
	for _, r := range rs {
		for _, m := range r.Recorded() {
			if strings.HasPrefix(m.Kernel, "matvec") {
				t.Errorf("prefill dispatch %q runs %s, not the tiled product", m.Label, m.Kernel)
			}
		}
	}
	for _, m := range vb.graph.decode.Recorded() {
		if strings.HasPrefix(m.Kernel, "matmul") {
			t.Errorf("decode dispatch %q runs %s", m.Label, m.Kernel)
		}
	}
}

// TestMatmulIntDot checks the tiled product's integer-dot variants
// (matmul_id_*, tuning.mmDot) for every quantized weight type under the
// CPU layout (x per lane; the norm, a gate/up pair and bias rows with one
// type of each unit size) and, for one type of each unit size, the GPU
// layout (x in shared memory): against the CPU reference within the exact
// sums' bound, and bit for bit against the float variant on the same
// inputs (the same seed gives the same weights and x, so equal outputs
// give equal errors to the last bit).
func TestMatmulIntDot(t *testing.T) {
	d := testDevice(t)
	if !d.Info.Features.IntegerDot {
		t.Skip("device without shaderIntegerDotProduct")
	}
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuTuning}} {
		for _, typ := range append(slices.Clone(allTypes), ggml.MXFP4) {
			if !typ.Quantized() || (tu.name == "gpu" && typ != ggml.Q4_0 && typ != ggml.Q4_K) {
				continue
			}
			cases := []mvCase{{typ: typ, rows: 70, cols: 512, ntok: 40, epi: epiResidual}}
			if tu.name == "cpu" && (typ == ggml.Q4_0 || typ == ggml.Q4_K || typ == ggml.MXFP4) {
				// the epilogues are the float form's code: one type of each unit size
				cases = append(cases, mvCase{typ: typ, rows: 29, cols: 512, ntok: 9, norm: true, pair: true, rbias: true, oai: typ == ggml.MXFP4})
			}
			for i, c := range cases {
				c.gemm = true
				t.Run(fmt.Sprintf("%s/%s/%dx%d/tok%d/pair%v", tu.name, typ, c.rows, c.cols, c.ntok, c.pair), func(t *testing.T) {
					var errs [2]float64
					for j, form := range []dotForm{dotFloat, dotInt} {
						tt := tu.t
						tt.mmDot = form
						withTuning(t, d, tt)
						c.kernel = "matmul_"
						if form == dotInt {
							c.kernel = "matmul_id_"
						}
						e, bad := runMatvec(t, d, c, rand.New(rand.NewSource(int64(31+i))))
						if bad > 0 {
							t.Errorf("%s: %d sentinels overwritten", c.kernel, bad)
						}
						errs[j] = e
					}
					bound := matmulExactNMSE
					if c.norm {
						bound = matvecNMSE
					}
					if errs[1] > bound {
						t.Errorf("integer dot: NMSE %.3g (bound %.0e)", errs[1], bound)
					}
					if errs[0] != errs[1] {
						t.Errorf("NMSE float %.17g, integer dot %.17g: the two forms differ", errs[0], errs[1])
					} else {
						t.Logf("NMSE %.3g both", errs[1])
					}
				})
			}
		}
	}
}

// TestMatmulIntDotChoice checks where the tiled product takes its
// integer-dot variant.
func TestMatmulIntDotChoice(t *testing.T) {
	d := testDevice(t)
	feat := d.Info.Features
	t.Cleanup(func() { d.Info.Features = feat })
	for _, c := range []struct {
		name       string
		form       dotForm
		dot, accel bool
		typ        ggml.Type
		f32x       bool
		want       bool
	}{
		{"accelerated", dotIntAccelerated, true, true, ggml.Q4_0, false, true},
		{"not accelerated", dotIntAccelerated, true, false, ggml.Q4_0, false, false},
		{"forced, not accelerated", dotInt, true, false, ggml.Q4_K, false, true},
		{"forced, no device dot", dotInt, false, false, ggml.Q4_0, false, false},
		{"float form", dotFloat, true, true, ggml.Q4_0, false, false},
		{"float weights", dotInt, true, true, ggml.F16, false, false},
		{"f32 x", dotInt, true, true, ggml.Q8_0, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := gpuTuning
			tu.mmDot = c.form
			withTuning(t, d, tu)
			d.Info.Features.IntegerDot, d.Info.Features.IntegerDotAccelerated = c.dot, c.accel
			if got := d.mmIntDot(c.typ, c.f32x); got != c.want {
				t.Errorf("mmIntDot %v, want %v", got, c.want)
			}
		})
	}
}

// TestUseMatmul checks which prefill products take the tiled kernel: every
// quantized type on the CPU layout, none on the GPU layout unless forced;
// never one token, the last token only, float weights or a missing
// scratch for the rounded x.
func TestUseMatmul(t *testing.T) {
	d := testDevice(t)
	xq, _ := d.NewBuffer("xq", 256, vulkan.MemDevice)
	gpuOn := gpuTuning
	gpuOn.matmul = true
	for _, c := range []struct {
		name   string
		tune   tuning
		typ    ggml.Type
		tokens int
		last   bool
		noXQ   bool
		want   bool
	}{
		{"cpu Q4_0", cpuTuning, ggml.Q4_0, 64, false, false, true},
		{"cpu Q8_0", cpuTuning, ggml.Q8_0, 64, false, false, true},
		{"cpu MXFP4", cpuTuning, ggml.MXFP4, 64, false, false, true},
		{"cpu Q4_K", cpuTuning, ggml.Q4_K, 64, false, false, true},
		{"cpu Q6_K", cpuTuning, ggml.Q6_K, 64, false, false, true},
		{"gpu forced Q4_K", gpuOn, ggml.Q4_K, 64, false, false, true},
		{"gpu default Q4_0", gpuTuning, ggml.Q4_0, 64, false, false, false},
		{"one token", cpuTuning, ggml.Q4_0, 1, false, false, false},
		{"last token", cpuTuning, ggml.Q4_0, 64, true, false, false},
		{"float weights", cpuTuning, ggml.F16, 64, false, false, false},
		{"no scratch", cpuTuning, ggml.Q4_0, 64, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			withTuning(t, d, c.tune)
			op := matvecOp{m: &Matrix{Type: c.typ, Rows: 8, Cols: 256, Units: 256 / layouts[c.typ].unit}, tokens: c.tokens, last: c.last, xq: xq}
			if c.noXQ {
				op.xq = nil
			}
			if got := d.useMatmul(&op); got != c.want {
				t.Errorf("useMatmul %v, want %v", got, c.want)
			}
		})
	}
}
