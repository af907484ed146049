package engine

import (
	"context"
	"math"
	"testing"

	"vkchat/runtime/backend"
)

// recyclingBackend records what the engine hands back and poisons it with
// NaN at once, as the next Forward may overwrite it: a slice the engine
// still read afterwards would change the reply or its log-probabilities,
// and one the backend reused without writing every element would show NaN.
type recyclingBackend struct {
	backend.Backend
	recycled int
}

func (r *recyclingBackend) Recycle(logits []float32) {
	r.recycled++
	for i := range logits {
		logits[i] = float32(math.NaN())
	}
	if inner, ok := r.Backend.(backend.Recycler); ok {
		inner.Recycle(logits)
	}
}

func TestRecycledLogitsLeaveTheReplyAlone(t *testing.T) {
	run := func(recycle bool) ([]Event, *recyclingBackend) {
		s := loadSession(t, "stories260K.gguf", "cpu")
		p := greedy()
		p.RepeatPenalty = 1.3 // the log-probabilities then read s.logits (Top)
		s.SetParams(p)
		var rb *recyclingBackend
		if recycle {
			rb = &recyclingBackend{Backend: s.be}
			s.be = rb
		}
		evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 16})
		if err != nil {
			t.Fatal(err)
		}
		return evs, rb
	}
	plain, _ := run(false)
	recycled, rb := run(true)
	if rb.recycled == 0 {
		t.Fatal("no step's logits were handed back")
	}
	var a, b []TokenInfo
	for _, e := range plain {
		if e.Kind == EventToken {
			a = append(a, *e.Token)
		}
	}
	for _, e := range recycled {
		if e.Kind == EventToken {
			b = append(b, *e.Token)
		}
	}
	if len(a) != len(b) {
		t.Fatalf("%d tokens with recycling, %d without", len(b), len(a))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].LogProb != b[i].LogProb || len(a[i].Top) != len(b[i].Top) {
			t.Fatalf("token %d: id %d logprob %g (%d top) recycled, id %d logprob %g (%d top) not",
				i, b[i].ID, b[i].LogProb, len(b[i].Top), a[i].ID, a[i].LogProb, len(a[i].Top))
		}
		for j := range a[i].Top {
			if a[i].Top[j] != b[i].Top[j] {
				t.Fatalf("token %d top %d: %+v recycled, %+v not", i, j, b[i].Top[j], a[i].Top[j])
			}
		}
	}
}

// TestRecycleLogitsWaitsForPreview: a replaced slice goes back to the
// backend only when no Preview may be reading it, and never the slice that
// replaces it.
func TestRecycleLogitsWaitsForPreview(t *testing.T) {
	old, next := make([]float32, 4), make([]float32, 4)
	cases := []struct {
		name      string
		old, next []float32
		previews  int
		want      int
	}{
		{"replaced", old, next, 0, 1},
		{"a preview is reading", old, next, 1, 0},
		{"the same slice", old, old, 0, 0},
		{"nothing before", nil, next, 0, 0},
		{"only a head next", old, nil, 0, 1},
	}
	for _, c := range cases {
		rb := &recyclingBackend{}
		s := &Session{be: rb, previews: c.previews}
		s.recycleLogits(c.old, c.next)
		if rb.recycled != c.want {
			t.Errorf("%s: %d slices handed back, want %d", c.name, rb.recycled, c.want)
		}
	}
}
