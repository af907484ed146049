package cpu

import (
	"context"
	"testing"

	"vkchat/runtime/backend"
)

// TestLastHiddenFollowsTheReads: with KeepHidden on, LastHidden hands over
// every row read since its previous call — a prefill in two chunks as one
// run, equal to ForwardHidden's rows of the whole batch — then only what
// follows, and after a rewind the rows from the rewind on; off (and for
// a model without an MTP head) nothing.
func TestLastHiddenFollowsTheReads(t *testing.T) {
	m := loadShared(t, "2026b/synth-qwen35mtp-F32.gguf")
	b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, e := context.Background(), m.Embd
	tokens := []int32{1, 403, 407, 261, 378, 432, 383, 286}
	_, want, err := b.ForwardHidden(ctx, tokens, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := b.LastHidden(); rows != 0 {
		t.Fatalf("KeepHidden off: %d rows kept", rows)
	}
	b.KeepHidden(true)
	for _, c := range []struct{ from, to int }{{0, 3}, {3, 6}, {6, 8}} {
		if c.from == 6 {
			b.Checkpoint() // for the rewind below
		}
		if _, err := b.Forward(ctx, tokens[c.from:c.to], c.from, false); err != nil {
			t.Fatal(err)
		}
	}
	rows, got := b.LastHidden()
	if rows != len(tokens) || maxDiff(got, want) != 0 {
		t.Fatalf("three chunks: %d rows, |Δ| %g from one batch's", rows, maxDiff(got[:min(len(got), len(want))], want))
	}
	b.Rewind(6)
	if _, err := b.Forward(ctx, tokens[6:8], 6, true); err != nil { // a rewind by two
		t.Fatal(err)
	}
	rows, got = b.LastHidden()
	if rows != 2 || maxDiff(got, want[6*e:]) != 0 {
		t.Fatalf("after a rewind: %d rows, want 2 equal to the batch's", rows)
	}
	if rows, _ := b.LastHidden(); rows != 0 {
		t.Errorf("read twice: %d rows", rows)
	}
	b.KeepHidden(true)
	b.KeepHidden(false)
	if !b.last.On() {
		t.Error("one of two keepers gone: off")
	}
	b.KeepHidden(false)
	if _, err := b.Forward(ctx, tokens[:2], 0, false); err != nil {
		t.Fatal(err)
	}
	if rows, _ := b.LastHidden(); rows != 0 {
		t.Errorf("off again: %d rows kept", rows)
	}
}
