package cpu

import (
	"fmt"
	"math"
	"os"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
)

// rotation is llama.cpp's Hadamard rotation of a quantized KV cache
// (PR #21038): with a quantized K, Q and K are multiplied after RoPE by an
// orthonormal Walsh-Hadamard matrix of order k (the largest power of two
// ≥ 64 dividing the head size) on each k-chunk of a head before K is
// cached; with a quantized V, V is multiplied by one of order 64 before it
// is cached and the attention output by it again (it is its own inverse).
// It leaves exact attention unchanged but changes what gets quantized, and
// an engine that skips it misses llama.cpp by about as much as the
// quantization itself. It applies only where every attention layer has
// one head size, a multiple of 64; 0 = none.
type rotation struct{ k, v int }

// cacheTypes checks the cache types against the plan and says which
// rotations they take.
func cacheTypes(p *plan.Plan, typK, typV backend.KVType) (rotation, error) {
	if err := p.CheckCacheTypes(typK, typV); err != nil {
		return rotation{}, fmt.Errorf("cpu backend: %w", err)
	}
	if !typK.Quantized() && !typV.Quantized() {
		return rotation{}, nil
	}
	hd := -1
	for _, s := range p.Cache {
		if hd == -1 || hd == s.HeadDim {
			hd = s.HeadDim
		} else {
			hd = 0 // heads differ: no rotation
		}
	}
	var r rotation
	if os.Getenv("VKCHAT_KV_ROTATE") == "off" {
		return r, nil // as llama.cpp's LLAMA_ATTN_ROT_DISABLE, to compare
	}
	if hd > 0 && hd%64 == 0 {
		if typK.Quantized() {
			r.k = 64
			for hd%(2*r.k) == 0 {
				r.k *= 2
			}
		}
		if typV.Quantized() {
			r.v = 64
		}
	}
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
