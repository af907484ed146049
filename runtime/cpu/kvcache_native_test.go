package cpu

import (
	"math"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/quant"
)

// TestKVLoadNative reads position ranges of an F16 ring, wrapping and not,
// and compares with widening each stored half on its own.
func TestKVLoadNative(t *testing.T) {
	const width, hd, capacity = 12, 4, 7 // 3 heads of 4
	kv := &kvCache{typ: backend.KVF16, typV: backend.KVF16, widths: []int{width}, capacity: []int{capacity}}
	kv.k16 = [][]uint16{make([]uint16, capacity*width)}
	kv.v16 = [][]uint16{make([]uint16, capacity*width)}
	for i := range kv.k16[0] {
		kv.k16[0][i] = quant.FP32ToFP16(float32(i) * 0.37)
		kv.v16[0][i] = quant.FP32ToFP16(-float32(i) * 1.3)
	}
	for _, r := range [][2]int{{0, 7}, {3, 9}, {5, 12}, {6, 7}, {10, 10}} {
		for h := 0; h < width/hd; h++ {
			n := r[1] - r[0]
			keys, vals := make([]float32, n*hd), make([]float32, n*hd)
			kv.load(0, h, hd, r[0], r[1], keys, vals)
			for p := r[0]; p < r[1]; p++ {
				for i := 0; i < hd; i++ {
					o := (p%capacity)*width + h*hd + i
					k, v := quant.FP16ToFP32(kv.k16[0][o]), quant.FP16ToFP32(kv.v16[0][o])
					got := (p-r[0])*hd + i
					if math.Float32bits(keys[got]) != math.Float32bits(k) || math.Float32bits(vals[got]) != math.Float32bits(v) {
						t.Fatalf("positions %v head %d: position %d element %d: %g/%g, want %g/%g", r, h, p, i, keys[got], vals[got], k, v)
					}
				}
			}
		}
	}
}
