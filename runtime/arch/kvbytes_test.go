package arch

import (
	"math"
	"testing"
)

// TestKVBytesSaturates: a KV cache too large to count in int64 reads as
// math.MaxInt64, never as a wrapped size ("KV cache -256 B" at --ctx 2^63-1
// for stories260K, whose 5 layers × 4 kv heads × 8 head dim wrapped from
// 2^55 positions); sizes that fit are exact.
func TestKVBytesSaturates(t *testing.T) {
	layers := func(n, kvHeads, headDim int) *Model {
		m := &Model{}
		for i := range n {
			m.Layers = append(m.Layers, Layer{Config: LayerConfig{KVHeads: kvHeads, HeadDim: headDim, KVLayer: i}})
		}
		return m
	}
	stories := layers(5, 4, 8)
	cases := []struct {
		m         *Model
		ctx, elem int
		want      int64
	}{
		{stories, 4096, 2, 5 * 4096 * 32 * 2 * 2},
		{stories, 1 << 24, 2, 5 << 24 * 32 * 2 * 2},
		{stories, 1 << 55, 2, math.MaxInt64},
		{stories, math.MaxInt, 2, math.MaxInt64},
		{layers(1, 1<<20, 1<<20), 1 << 24, 2, math.MaxInt64}, // 2^64 positions × width
		{layers(9, 1<<20, 1<<10), 1 << 30, 1, math.MaxInt64}, // the sum over layers overflows
	}
	for _, tc := range cases {
		if got := tc.m.KVBytes(tc.ctx, tc.elem); got != tc.want {
			t.Errorf("%d layers × %d kv heads × %d head dim, ctx %d × %d B: %d, want %d",
				len(tc.m.Layers), tc.m.Layers[0].Config.KVHeads, tc.m.Layers[0].Config.HeadDim, tc.ctx, tc.elem, got, tc.want)
		}
	}
	if SatAdd(math.MaxInt64, 1) != math.MaxInt64 || SatMul(-1, 5) != 0 || SatMul(3, 5) != 15 {
		t.Error("SatAdd/SatMul")
	}
}
