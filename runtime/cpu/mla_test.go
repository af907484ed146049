package cpu

import (
	"context"
	"math"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/simd"
)

// TestMLAPathsAgree: deepseek2's latent attention gives the same bits
// whichever way the work runs — split by query head over the F16 cache
// in place (the default with native kernels), by its one KV head (one
// worker for all heads), or the portable loops over the widened rows —
// through a prefill, decode steps and a rewind.
func TestMLAPathsAgree(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	m := loadShared(t, "2026b/synth-deepseek2-F32.gguf")
	const ctx, n, prefill = 64, 30, 12
	tokens := make([]int32, n)
	for i := range tokens {
		tokens[i] = int32((i*37 + 11) % m.Vocab)
	}
	run := func(native, byQuery bool) [][]float32 {
		nativeAttention = native
		defer func() { nativeAttention = true }()
		b, err := newFor(m, backend.Options{ContextSize: ctx, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if b.s.mqaQH == nil {
			t.Fatal("no per-query-head scratch for an MLA model")
		}
		if !byQuery {
			b.s.mqaQH = nil
		}
		bg := context.Background()
		lg, err := b.Forward(bg, tokens[:prefill], 0, true)
		if err != nil {
			t.Fatal(err)
		}
		out := [][]float32{lg}
		for i := prefill; i < n; i++ {
			lg, err := b.Forward(bg, tokens[i:i+1], i, false)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]float32(nil), lg...))
		}
		lg, err = b.Forward(bg, tokens[n-5:], n-5, true)
		if err != nil {
			t.Fatal(err)
		}
		return append(out, lg)
	}
	want := run(true, true)
	for _, c := range []struct {
		name            string
		native, byQuery bool
	}{{"by KV head", true, false}, {"portable", false, false}} {
		got := run(c.native, c.byQuery)
		for s := range want {
			for i := range want[s] {
				if math.Float32bits(got[s][i]) != math.Float32bits(want[s][i]) {
					t.Fatalf("%s: call %d logit %d: %g, split by query head %g", c.name, s, i, got[s][i], want[s][i])
				}
			}
		}
	}
}
