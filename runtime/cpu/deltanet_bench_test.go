package cpu

import (
	"math"
	"testing"
)

// BenchmarkDeltaStep is one value head's delta-rule step at Qwen3.5's
// state size (128): what a DeltaNet layer does H_v times per token.
func BenchmarkDeltaStep(b *testing.B) {
	const S = 128
	m := make([]float32, S*S)
	q, k, v, o := make([]float32, S), make([]float32, S), make([]float32, S), make([]float32, S)
	for i := range m {
		m[i] = float32(math.Sin(float64(i))) * 0.1
	}
	for i := range q {
		q[i], k[i], v[i] = float32(math.Cos(float64(i)))/11, float32(math.Sin(float64(3*i)))/11, float32(i%7)-3
	}
	b.SetBytes(4 * S * S)
	for b.Loop() {
		deltaStep(m, q, k, v, o, -0.01, 0.5)
	}
}
