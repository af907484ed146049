package cpu

import (
	"vkchat/runtime/backend"
	"vkchat/runtime/simd"
)

// loadNative is load for an F16 cache with F16C: each run of positions that
// does not wrap around the ring is widened in one native call per K and V
// (exact, as the portable conversion). It reports false, having done
// nothing, for an F32 cache or without native kernels.
func (kv *kvCache) loadNative(layer, h, headDim, from, to int, keys, vals []float32) bool {
	if kv.typ != backend.KVF16 || kv.typV != backend.KVF16 || simd.Level() == 0 {
		return false
	}
	c, width := kv.capacity[layer], kv.widths[layer]
	for t := from; t < to; {
		slot := t % c
		n := min(to-t, c-slot)
		o := slot*width + h*headDim
		d := (t - from) * headDim
		simd.F16Rows(keys[d:d+n*headDim], kv.k16[layer][o:], headDim, width, n)
		simd.F16Rows(vals[d:d+n*headDim], kv.v16[layer][o:], headDim, width, n)
		t += n
	}
	return true
}
