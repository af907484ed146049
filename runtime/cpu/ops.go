package cpu

import (
	"math"
	"sync"

	"vkchat/models"
	"vkchat/runtime/quant"
)

// rmsNorm writes x / rms(x) * w into out (out may be x); w nil skips the
// weight. The mean is accumulated in float64 as ggml does, which matters for
// agreement at 1e-3 on logits. (Rounding the squares, the mean and 1/sqrt to
// float32 as ggml's C reads was tried: stories260K.p3's greedy text then
// left llama.cpp's at token 111, so the float64 form stays.)
func rmsNorm(out, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	if w == nil {
		for i := range x {
			out[i] = x[i] * scale
		}
		return
	}
	for i := range x {
		out[i] = x[i] * scale * w[i]
	}
}

// rmsNormRows normalizes each width-wide row of x in place.
func rmsNormRows(x []float32, width int, w []float32, eps float32) {
	for o := 0; o+width <= len(x); o += width {
		rmsNorm(x[o:o+width], x[o:o+width], w, eps)
	}
}

func scaleAll(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// tanhf is C's tanhf to within an ulp: float64 tanh rounded once.
func tanhf(x float32) float32 { return float32(math.Tanh(float64(x))) }

// softcap is c·tanh(x/c) as ggml's graph computes it for the final logits:
// x·(1/c), tanh, ·c, each rounded to float32.
func softcap(x []float32, c float32) {
	inv := 1 / c
	for i, v := range x {
		x[i] = tanhf(v*inv) * c
	}
}

// vectorF32 reinterprets an F32 vector weight; nil for a weight that is
// absent.
func vectorF32(w models.Weight) []float32 {
	if w.Data == nil {
		return nil
	}
	out := make([]float32, w.Cols)
	_ = quant.Dequantize(w.Type, w.Data, out)
	return out
}

// optVector is vectorF32 of an optional weight.
func optVector(w *models.Weight) []float32 {
	if w == nil {
		return nil
	}
	return vectorF32(*w)
}

func matrix(w models.Weight) quant.Matrix {
	return quant.Matrix{Type: w.Type, Cols: w.Cols, Rows: w.Rows, Data: w.Data}
}

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

// geluTable is llama.cpp's CPU GELU: a table over every F16 value of
// 0.5x(1+tanh(√(2/π)·x·(1+0.044715x²))) computed in float32 and stored as
// F16, indexed by x rounded to F16.
var geluTable = sync.OnceValue(func() []float32 {
	const sqrt2OverPi, coefA = float32(0.79788456080286535587989211986876), float32(0.044715)
	t := make([]float32, 1<<16)
	for i := range t {
		x := quant.FP16ToFP32(uint16(i))
		g := 0.5 * x * (1 + tanhf(sqrt2OverPi*x*(1+coefA*x*x)))
		t[i] = quant.FP16ToFP32(quant.FP32ToFP16(g))
	}
	return t
})

// gelu is ggml_vec_gelu_f32 with GGML_GELU_FP16: zero below -10, the
// identity above 10, the F16 table between.
func gelu(table []float32, x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return table[quant.FP32ToFP16(x)]
}

// parallelFor runs fn(i) for i in [0, n) over up to workers goroutines.
func parallelFor(n, workers int, fn func(i int)) {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	workers = min(workers, n)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}(w)
	}
	wg.Wait()
}
