package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/vk/vulkan"
)

// ggmlRMSNorm is ggml's CPU rms_norm followed by the weight's mul, as the
// CPU backend computes it: each square rounded to f32, the sum in double,
// the mean rounded to f32, then 1.0f/sqrtf(mean + eps) and (x·scale)·w.
func ggmlRMSNorm(x, w []float32, eps float32) []float32 {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = v * scale
		if w != nil {
			out[i] *= w[i]
		}
	}
	return out
}

// wideRow is a row whose values span many binades, where a sum of squares
// in f32 lands an ulp or more off the double one.
func wideRow(n int, rng *rand.Rand) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Exp(3*rng.NormFloat64()))
	}
	return x
}

// TestResidualNormRoundsAsGGML: residual.comp's norm of a branch's output
// (gemma's post-norms), added to the stream or stored, rounds as ggml's
// CPU rms_norm and add, bit for bit, on row lengths that are not powers
// of two too. With the squares summed in f32 (the kernel's before), 128
// of 384 to 2783 of 8640 stored values were off (fewer once added to the
// stream).
func TestResidualNormRoundsAsGGML(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(43))
	const tokens, eps = 3, 1e-6
	for _, n := range []int{128, 256, 320, 2880} {
		for _, add := range []bool{false, true} {
			t.Run(fmt.Sprintf("n%d/add%v", n, add), func(t *testing.T) {
				o, x := make([]float32, tokens*n), make([]float32, tokens*n)
				for tk := 0; tk < tokens; tk++ {
					copy(o[tk*n:], wideRow(n, rng))
					copy(x[tk*n:], wideRow(n, rng))
				}
				w := make([]float32, n)
				for i := range w {
					w[i] = float32(0.5 + rng.Float64())
				}
				ob, _ := d.NewBuffer("o", uint64(4*len(o)), vulkan.MemDevice)
				ob.Write(0, f32bytes(o))
				xb, _ := d.NewBuffer("x", uint64(4*len(x)), vulkan.MemDevice)
				xb.Write(0, f32bytes(x))
				wb, _ := d.NewBuffer("w", uint64(4*n), vulkan.MemDevice)
				wb.Write(0, f32bytes(w))
				step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
				binary.LittleEndian.PutUint32(step.Mapped(), tokens)
				runOnce(t, d, func(r *vulkan.Recorder) error {
					return d.normInto(r, "norm", ob, wb, xb, step, n, n, eps, 1, add, tokens)
				})
				raw := make([]byte, 4*len(x))
				xb.Read(0, raw)
				got := bytesF32(raw)
				bad := 0
				for tk := 0; tk < tokens; tk++ {
					want := ggmlRMSNorm(o[tk*n:(tk+1)*n], w, eps)
					for i, v := range want {
						if add {
							v += x[tk*n+i]
						}
						if got[tk*n+i] != v {
							bad++
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d values differ from ggml's rounding", bad, len(x))
				}
			})
		}
	}
}

// TestProductNormRoundsAsGGML: the RMS norm the F32 mat-vec in the CPU
// backend's order (matvec.comp's ORDER, on the CPU device layout's
// register kernel, in an all-F32 model) folds into a product rounds as
// ggml's CPU rms_norm, bit
// for bit: F32 identity weights make the product the normed row. The
// other mat-vecs (quantized weights, the GPU layout's shared-x kernel,
// the tiled product) keep their f32 sums of squares: their products do
// not sum in the CPU's order, so an exact norm there does not give the
// CPU's bits, and measured it moved synth-mistral3-Q4_K_M and
// synth-deepseek2-Q4_K_M on Vulkan over the 0.25 (runtime/engine
// TestArchs2026bMatchLlamaCpp).
func TestProductNormRoundsAsGGML(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, cpuTuning)
	rng := rand.New(rand.NewSource(43))
	for _, cols := range []int{128, 256, 320, 2880} {
		for _, ntok := range []int{1, 3} {
			t.Run(fmt.Sprintf("cols%d/tok%d", cols, ntok), func(t *testing.T) {
				normIdentity(t, d, cols, ntok, rng)
			})
		}
	}
}

func normIdentity(t *testing.T, d *gpu, cols, ntok int, rng *rand.Rand) {
	w := make([]byte, 4*cols*cols)
	for r := 0; r < cols; r++ {
		binary.LittleEndian.PutUint32(w[4*(r*cols+r):], math.Float32bits(1))
	}
	m, err := d.uploadMatrix("identity", ggml.F32, cols, cols, w)
	if err != nil {
		t.Fatal(err)
	}
	m.cpuOrder = true // an all-F32 model's (weights.upload)
	x := make([]float32, 0, ntok*cols)
	for tk := 0; tk < ntok; tk++ {
		x = append(x, wideRow(cols, rng)...)
	}
	nw := make([]float32, cols)
	for i := range nw {
		nw[i] = float32(0.5 + rng.Float64())
	}
	xb, _ := d.NewBuffer("x", uint64(4*len(x)), vulkan.MemDevice)
	xb.Write(0, f32bytes(x))
	nwb, _ := d.NewBuffer("nw", uint64(4*len(nw)), vulkan.MemDevice)
	nwb.Write(0, f32bytes(nw))
	yb, _ := d.NewBuffer("y", uint64(4*len(x)), vulkan.MemDevice)
	step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
	binary.LittleEndian.PutUint32(step.Mapped(), uint32(ntok))
	op := matvecOp{label: "norm", m: m, x: xb, xstride: cols, norm: nwb, eps: 1e-6, y: yb, ystride: cols, epi: epiStore, tokens: ntok, step: step}
	runOnce(t, d, func(r *vulkan.Recorder) error { return d.matvec(r, op) })
	out := make([]byte, 4*len(x))
	yb.Read(0, out)
	got := bytesF32(out)
	bad := 0
	for tk := 0; tk < ntok; tk++ {
		for i, v := range ggmlRMSNorm(x[tk*cols:(tk+1)*cols], nw, 1e-6) {
			if got[tk*cols+i] != v {
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ from ggml's rounding", bad, len(x))
	}
}
