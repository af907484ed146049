package cpu

import (
	"math"
	"sync"

	"vkchat/models"
	"vkchat/runtime/quant"
)

// rmsNorm writes x / rms(x) * w into out. The mean is accumulated in float64
// as ggml does, which matters for agreement at 1e-3 on logits.
func rmsNorm(out, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	for i := range x {
		out[i] = x[i] * scale * w[i]
	}
}

// vectorF32 reinterprets an F32 vector weight.
func vectorF32(w models.Weight) []float32 {
	out := make([]float32, w.Cols)
	_ = quant.Dequantize(w.Type, w.Data, out)
	return out
}

func matrix(w models.Weight) quant.Matrix {
	return quant.Matrix{Type: w.Type, Cols: w.Cols, Rows: w.Rows, Data: w.Data}
}

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

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
