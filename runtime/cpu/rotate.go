package cpu

import (
	"fmt"
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
)

// rotation holds the Hadamard orders of a quantized cache's keys and
// values (plan.CacheRotation; 0 = none).
type rotation struct{ k, v int }

// cacheTypes checks the cache types against the plan and says which
// rotations they take.
func cacheTypes(p *plan.Plan, typK, typV backend.KVType) (rotation, error) {
	if err := p.CheckCacheTypes(typK, typV); err != nil {
		return rotation{}, fmt.Errorf("cpu backend: %w", err)
	}
	var r rotation
	r.k, r.v = p.CacheRotation(typK, typV)
	return r, nil
}

// hadamard multiplies each n-chunk of x by the orthonormal Walsh-Hadamard
// matrix of order n (Sylvester order, entries ±1/√n) as ggml's CPU fast
// transform does: each value times 1/√n first (f32 1/sqrtf(n)), then the
// butterflies in f32, half-lengths 1, 2, 4, ... For n = 128 the scale is
// not a power of two, so scaling last would round differently and move
// what the cache quantizes.
func hadamard(x []float32, n int) {
	scale := hadamardScale(n)
	for c := 0; c+n <= len(x); c += n {
		y := x[c : c+n]
		for i := range y {
			y[i] *= scale
		}
		for h := 1; h < n; h *= 2 {
			for i := 0; i < n; i += 2 * h {
				for j := i; j < i+h; j++ {
					a, b := y[j], y[j+h]
					y[j], y[j+h] = a+b, a-b
				}
			}
		}
	}
}

// hadamardScale is 1/√n rounded as ggml's 1.0f/sqrtf((float)n): the f32
// square root (correctly rounded from the f64 one), then an f32 division.
func hadamardScale(n int) float32 {
	return 1 / float32(math.Sqrt(float64(n)))
}
