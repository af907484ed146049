package cpu

import (
	"context"
	"testing"

	"vkchat/runtime/backend"
)

// TestSharedKVChunks: Gemma 4's KV-shared layers read their source's
// cache, and a sliding source keeps only its 8-position window as a ring.
// A prompt run as one batch and the same prompt run in uneven chunks
// (each chunk after the first starting past the window, so a chunk's own
// keys would overwrite the ring slots its first queries still need if the
// source stored them before the shared layer attended) give the same
// logits at every position.
func TestSharedKVChunks(t *testing.T) {
	m := loadShared(t, "2026/synth-gemma4-F32.gguf")
	tokens := make([]int32, 40)
	for i := range tokens {
		tokens[i] = int32(7*i%500 + 3)
	}
	run := func(chunks []int) []float32 {
		b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var out []float32
		pos := 0
		for _, n := range chunks {
			lg, err := b.Forward(context.Background(), tokens[pos:pos+n], pos, true)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, lg...)
			pos += n
		}
		return out
	}
	whole := run([]int{40})
	for _, chunks := range [][]int{{13, 5, 22}, {9, 1, 30}, {20, 20}} {
		if d := maxDiff(whole, run(chunks)); d > 1e-3 {
			t.Errorf("chunks %v: logits differ from one batch by %.3g", chunks, d)
		}
	}
}
