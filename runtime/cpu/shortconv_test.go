package cpu

import (
	"context"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/backend"
)

func newLFM2(t *testing.T) *Backend {
	t.Helper()
	b, err := newFor(loadShared(t, "2026/synth-lfm2-F32.gguf"), backend.Options{ContextSize: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func lfm2Tokens(n, salt int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(3 + (i*37+salt*101)%500)
	}
	return out
}

// TestShortConvRewind: a hybrid model read in one pass and read with
// detours (other tokens after a checkpoint, then a rewind to it) gives the
// same logits, exactly: a checkpoint saves the whole state and a rewind
// restores it, the attention layers' cache being overwritten from there.
func TestShortConvRewind(t *testing.T) {
	ctx := context.Background()
	toks := lfm2Tokens(20, 0)
	want, err := newLFM2(t).Forward(ctx, toks, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	b := newLFM2(t)
	var _ backend.StateBackend = b
	steps := []struct {
		forward []int32
		at      int
		rewind  int // -1: none
		back    int // what Rewind returns
		ckpts   []int
	}{
		{forward: toks[:7], at: 0, rewind: -1, ckpts: []int{7}},
		{forward: toks[7:13], at: 7, rewind: -1, ckpts: []int{7, 13}},
		{forward: lfm2Tokens(5, 1), at: 13, rewind: 15, back: 13, ckpts: []int{7, 13}},
		{forward: lfm2Tokens(3, 2), at: 13, rewind: 12, back: 7, ckpts: []int{7}},
		{forward: toks[7:13], at: 7, rewind: 5, back: 0, ckpts: []int{}},
	}
	for i, s := range steps {
		if _, err := b.Forward(ctx, s.forward, s.at, false); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if s.rewind < 0 {
			b.Checkpoint()
		} else if got := b.Rewind(s.rewind); got != s.back {
			t.Fatalf("step %d: Rewind(%d) = %d, want %d", i, s.rewind, got, s.back)
		}
		if got := b.Checkpoints(); !slices.Equal(got, s.ckpts) && !(len(got) == 0 && len(s.ckpts) == 0) {
			t.Fatalf("step %d: checkpoints %v, want %v", i, got, s.ckpts)
		}
	}
	// back at 0 with no checkpoint: read everything, one token at a time
	// past the first batch
	got, err := b.Forward(ctx, toks[:12], 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := 12; i < len(toks); i++ {
		l, err := b.Forward(ctx, toks[i:i+1], i, false)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l...)
	}
	if d := maxDiff(got, want); d != 0 {
		t.Errorf("logits after rewinds differ from one pass by %g", d)
	}
	// a rewind to a checkpoint mid-prompt, then the rest again
	b.Rewind(0)
	if _, err := b.Forward(ctx, toks[:9], 0, false); err != nil {
		t.Fatal(err)
	}
	b.Checkpoint()
	if _, err := b.Forward(ctx, toks[9:], 9, false); err != nil {
		t.Fatal(err)
	}
	if at := b.Rewind(11); at != 9 {
		t.Fatalf("Rewind(11) = %d, want the checkpoint at 9", at)
	}
	last, err := b.Forward(ctx, toks[9:], 9, false)
	if err != nil {
		t.Fatal(err)
	}
	v := b.plan.Vocab
	if d := maxDiff(last, want[(len(toks)-1)*v:]); d != 0 {
		t.Errorf("last logits after a rewind to 9 differ by %g", d)
	}
}

// TestShortConvForwardElsewhere: Forward anywhere but at the state's
// position (or 0, which starts over) is an error, not a silently wrong
// state.
func TestShortConvForwardElsewhere(t *testing.T) {
	ctx := context.Background()
	b := newLFM2(t)
	if _, err := b.Forward(ctx, lfm2Tokens(5, 0), 0, false); err != nil {
		t.Fatal(err)
	}
	for _, pos := range []int{3, 6} {
		_, err := b.Forward(ctx, lfm2Tokens(1, 0), pos, false)
		if err == nil || !strings.Contains(err.Error(), "the recurrent state is at position 5") {
			t.Errorf("Forward at %d: %v; want an error naming the state's position", pos, err)
		}
	}
	if _, err := b.Forward(ctx, lfm2Tokens(1, 0), 5, false); err != nil {
		t.Errorf("Forward at the state's position: %v", err)
	}
}

// TestShortConvCheckpointBound: the backend keeps at most MaxCheckpoints, dropping
// the oldest; one taken twice at a position is kept once; Memory counts
// their bytes and the state's, the KV cache the attention layers only.
func TestShortConvCheckpointBound(t *testing.T) {
	ctx := context.Background()
	b := newLFM2(t)
	var want []int
	for i := 0; i < MaxCheckpoints+3; i++ {
		if _, err := b.Forward(ctx, lfm2Tokens(2, i), 2*i, false); err != nil {
			t.Fatal(err)
		}
		b.Checkpoint()
		b.Checkpoint()
		want = append(want, 2*i+2)
	}
	want = want[len(want)-MaxCheckpoints:]
	if got := b.Checkpoints(); !slices.Equal(got, want) {
		t.Errorf("checkpoints %v, want %v", got, want)
	}
	mem := b.Memory()
	if mem.StateBytes != 4*2*256*4 || mem.CheckpointBytes != MaxCheckpoints*mem.StateBytes {
		t.Errorf("state %d B, checkpoints %d B; want %d and %d", mem.StateBytes, mem.CheckpointBytes, 4*2*256*4, MaxCheckpoints*4*2*256*4)
	}
	if want := int64(2 * 64 * 2 * 64 * 2 * 2); mem.KVAllocated != want {
		t.Errorf("KV allocated %d, want %d (2 attention layers)", mem.KVAllocated, want)
	}
	if !strings.HasSuffix(mem.StateFormula, "= 8192 B") {
		t.Errorf("state formula %q", mem.StateFormula)
	}
}
