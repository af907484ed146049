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
// matrix of order n (Sylvester order, entries ±1/√n): the fast transform's
// butterflies in f32, then the scale.
func hadamard(x []float32, n int) {
	scale := float32(1 / math.Sqrt(float64(n)))
	for c := 0; c+n <= len(x); c += n {
		y := x[c : c+n]
		for h := 1; h < n; h *= 2 {
			for i := 0; i < n; i += 2 * h {
				for j := i; j < i+h; j++ {
					a, b := y[j], y[j+h]
					y[j], y[j+h] = a+b, a-b
				}
			}
		}
		for i := range y {
			y[i] *= scale
		}
	}
}
