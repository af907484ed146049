package cpu

import (
	"context"
	"math"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
)

// newFor is New on m's plan for opts' context.
func newFor(m *arch.Model, opts backend.Options) (*Backend, error) {
	p, err := plan.Resolve(m, opts.ContextSize)
	if err != nil {
		return nil, err
	}
	return New(p, opts)
}

func loadShared(t *testing.T, name string) *arch.Model {
	t.Helper()
	return loadFile(t, testenv.Model(t, name))
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestWindowRing: gemma3's local layers keep only their 8-position window
// (a ring). Prefill in one batch far longer than the window, decoding one
// token at a time through many wraps of the ring, and rewinds — one
// position (the ring still holds it) and far past the window (recomputed
// from the kept tokens) — must all give the logits of the same positions.
func TestWindowRing(t *testing.T) {
	m := loadShared(t, "synth-gemma3-F32.gguf")
	const ctx, n = 64, 40
	tokens := make([]int32, n)
	for i := range tokens {
		tokens[i] = int32((i*37 + 11) % m.Vocab)
	}
	newBackend := func() *Backend {
		b, err := newFor(m, backend.Options{ContextSize: ctx, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bg := context.Background()
	v := m.Vocab
	batch, err := newBackend().Forward(bg, tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	step := newBackend()
	for i, tok := range tokens {
		got, err := step.Forward(bg, []int32{tok}, i, false)
		if err != nil {
			t.Fatal(err)
		}
		// Matrix products may sum a batch in another order than one row;
		// a wrong window or ring slot moves logits by far more.
		if d := maxDiff(got, batch[i*v:(i+1)*v]); d > 1e-3 {
			t.Fatalf("position %d: one token at a time differs from the batch by %.3g", i, d)
		}
	}
	for _, rewind := range []int{n - 1, 30, 3} {
		got, err := step.Forward(bg, tokens[rewind:], rewind, true)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(got, batch[rewind*v:]); d > 1e-3 {
			t.Errorf("rewind to %d: logits differ from the first pass by %.3g", rewind, d)
		}
	}

	mem := step.Memory()
	// 1 global layer × 64 positions + 5 local layers × 8, K and V, 2 KV
	// heads × 128 dims in F16.
	want := int64(1*64+5*8) * 2 * 2 * 128 * 2
	if mem.KVAllocated != want || m.KVBytes(ctx, 2) != want {
		t.Errorf("KV allocated %d (model says %d), want %d", mem.KVAllocated, m.KVBytes(ctx, 2), want)
	}
	if !strings.Contains(mem.KVFormula, "(1 layer × 64 ctx + 5 layers × 8 window)") {
		t.Errorf("formula %q does not show the windowed layers", mem.KVFormula)
	}
	perLayer := int64(2 * 2 * 128 * 2)
	if got, want := mem.KVUsedAt(20), 20*6*perLayer-12*5*perLayer; got != want {
		t.Errorf("KV used at 20 positions: %d, want %d", got, want)
	}
	if got := mem.KVUsedAt(ctx); got != mem.KVAllocated {
		t.Errorf("KV used with a full context %d, allocated %d", got, mem.KVAllocated)
	}
}
