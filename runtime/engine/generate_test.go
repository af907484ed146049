package engine

import (
	"context"
	"strings"
	"testing"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

func collect(t *testing.T, s *Session, ctx context.Context, req Request) ([]Event, error) {
	t.Helper()
	var evs []Event
	err := s.Generate(ctx, req, func(e Event) { evs = append(evs, e) })
	return evs, err
}

func greedy() sample.Params { p := sample.Defaults(); p.Temperature = 0; return p }

func userMsg(text string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: text}} }

func TestGenerateEventsAndKVAccounting(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Kind != EventPrefill || evs[len(evs)-1].Kind != EventDone {
		t.Fatalf("events must start with prefill and end with done, got kinds %v ... %v", evs[0].Kind, evs[len(evs)-1].Kind)
	}
	if evs[0].Prefill.Tokens != 5 {
		t.Errorf("prefill computed %d tokens, want 5 (BOS + 4)", evs[0].Prefill.Tokens)
	}
	var text strings.Builder
	tokens := 0
	for _, e := range evs {
		if e.Kind == EventToken {
			text.WriteString(e.Token.Piece)
			if e.Token.Index != tokens {
				t.Errorf("token index %d, want %d", e.Token.Index, tokens)
			}
			if len(e.Token.Candidates) == 0 || e.Token.Candidates[0].ID != e.Token.ID {
				t.Errorf("greedy token %d is not the top candidate", e.Token.ID)
			}
			tokens++
		}
	}
	ref := loadReference(t, "stories260K.p1.json")
	if !strings.HasPrefix(ref.Text, text.String()) || tokens != 20 {
		t.Errorf("streamed %d tokens %q, want a 20-token prefix of %q", tokens, text.String(), ref.Text)
	}
	done := evs[len(evs)-1]
	if done.Done.Reason != StopMaxTokens || done.Done.Generated != 20 {
		t.Errorf("done %+v", done.Done)
	}
	st := done.Stats
	info := s.Info()
	perToken := int64(info.Layers * 2 * info.KVHeads * info.HeadDim * 2) // f16
	if st.KVPerToken != perToken || st.KVUsed != int64(st.ContextUsed)*perToken || st.KVAllocated != int64(st.ContextSize)*perToken {
		t.Errorf("kv stats %+v, want %d bytes per token", st, perToken)
	}
	// 5 prompt tokens + 19 forwarded generated tokens (the last one is sampled but never fed back).
	if st.ContextUsed != 24 {
		t.Errorf("context used %d, want 24", st.ContextUsed)
	}
}

func TestGenerateReusesCachedPrefix(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	if _, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 4}); err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time there"), MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if p := evs[0].Prefill; p.Reused != 5 || p.Tokens != 1 {
		t.Errorf("second prompt reused %d and computed %d tokens, want 5 and 1", p.Reused, p.Tokens)
	}
}

func TestGenerateStopsAtFullContext(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	s.ctxSize = 16 // the backend holds 512 positions; the session only lets 16 be used
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time")})
	if err != nil {
		t.Fatal(err)
	}
	done := evs[len(evs)-1]
	if done.Done.Reason != StopContext && done.Done.Reason != StopEOS {
		t.Fatalf("stop reason %s, want context", done.Done.Reason)
	}
	if done.Stats.ContextUsed > 16 {
		t.Errorf("context used %d exceeds the size 16", done.Stats.ContextUsed)
	}
}

func TestGenerateCancelKeepsCacheConsistent(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := s.Generate(ctx, Request{Messages: userMsg("Once upon a time")}, func(e Event) {
		if e.Kind == EventToken {
			if n++; n == 3 {
				cancel()
			}
		}
		if e.Kind == EventDone && e.Done.Reason != StopCanceled {
			t.Errorf("stop reason %s, want canceled", e.Done.Reason)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// After a cancel the next reply must continue from a consistent cache:
	// the same greedy text as a fresh session gives.
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	fresh := loadSession(t, "stories260K.gguf", "cpu")
	fresh.SetParams(greedy())
	want, err := collect(t, fresh, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, exp := pieces(evs), pieces(want); got != exp {
		t.Errorf("after cancel %q, fresh session %q", got, exp)
	}
}

func TestPreviewFollowsParams(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	if _, ok := s.Preview(greedy()); ok {
		t.Fatal("preview before any generation must report ok=false")
	}
	if _, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 2}); err != nil {
		t.Fatal(err)
	}
	p := sample.Defaults()
	p.TopK = 3
	res, ok := s.Preview(p)
	if !ok {
		t.Fatal("no preview after generation")
	}
	kept := 0
	for _, c := range res.Candidates {
		if !c.Cut {
			kept++
		}
	}
	if kept > 3 || kept == 0 {
		t.Errorf("top-k 3 preview kept %d candidates", kept)
	}
}

func pieces(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == EventToken {
			b.WriteString(e.Token.Piece)
		}
	}
	return b.String()
}
