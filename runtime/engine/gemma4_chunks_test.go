package engine

import (
	"context"
	"math"
	"testing"
)

// On every backend, Gemma 4's prompt run as one batch and in uneven
// chunks that start past the sliding window give the same logits: the
// KV-shared layers read their sliding source's ring, whose slots a chunk's
// own keys must not take before the shared layer has attended.
func TestGemma4SharedKVChunks(t *testing.T) {
	for _, name := range testBackends(t) {
		t.Run(name, func(t *testing.T) {
			tokens := make([]int32, 40)
			for i := range tokens {
				tokens[i] = int32(7*i%500 + 3)
			}
			run := func(chunks []int) []float32 {
				s := loadSession(t, "2026/synth-gemma4-F32.gguf", name)
				var out []float32
				pos := 0
				for _, n := range chunks {
					lg, err := s.be.Forward(context.Background(), tokens[pos:pos+n], pos, true)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, lg...)
					pos += n
				}
				return out
			}
			whole := run([]int{40})
			for _, chunks := range [][]int{{9, 1, 30}, {20, 20}} {
				got := run(chunks)
				d := 0.0
				for i := range whole {
					d = math.Max(d, math.Abs(float64(whole[i]-got[i])))
				}
				if d > 1e-3 {
					t.Errorf("chunks %v: logits differ from one batch by %.3g", chunks, d)
				}
			}
		})
	}
}
