package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/chat"
)

// faultyBackend fails every Forward after the first ok calls, the way a
// lost GPU does.
type faultyBackend struct {
	backend.Backend
	ok    int
	calls int
	err   error
}

func (f *faultyBackend) Forward(ctx context.Context, tokens []int32, pos int, all bool) ([]float32, error) {
	f.calls++
	if f.calls > f.ok {
		return nil, f.err
	}
	return f.Backend.Forward(ctx, tokens, pos, all)
}

func TestDeviceLostMidGenerationThenCPUFallback(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	lost := fmt.Errorf("vkQueueSubmit: VK_ERROR_DEVICE_LOST: %w", backend.ErrDeviceLost)
	s.be = &faultyBackend{Backend: s.be, ok: 4, err: lost}
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 20})
	if !errors.Is(err, backend.ErrDeviceLost) {
		t.Fatalf("Generate returned %v, want a device-lost error", err)
	}
	done := evs[len(evs)-1]
	if done.Kind != EventDone || done.Done.Reason != StopError || !errors.Is(done.Done.Err, backend.ErrDeviceLost) {
		t.Fatalf("last event %+v, want done with the device-lost error", done)
	}
	partial := pieces(evs)
	if partial == "" {
		t.Error("the tokens produced before the fault were not reported")
	}
	// The cache holds only what the backend really computed.
	if used := done.Stats.ContextUsed; used != 5+3 {
		t.Errorf("context used %d after the fault, want 8 (prompt + 3 decoded)", used)
	}
	if err := s.SwitchBackend("cpu"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.ContextUsed != 0 {
		t.Errorf("a new backend must start with an empty cache, has %d", st.ContextUsed)
	}
	evs, err = collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 20})
	if err != nil {
		t.Fatalf("generation after switching to the CPU: %v", err)
	}
	ref := loadReference(t, "stories260K.p1.json")
	if got := pieces(evs); len(got) < len(partial) || got[:len(partial)] != partial || got != ref.Text[:len(got)] {
		t.Errorf("after fallback %q; before the fault %q; llama.cpp %q", got, partial, ref.Text)
	}
}

func TestPromptLongerThanContextIsAClearError(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.ctxSize = 8
	long := "Once upon a time there was a little girl named Lily who loved to play"
	_, err := collect(t, s, context.Background(), Request{Messages: userMsg(long)})
	if err == nil {
		t.Fatal("a prompt longer than the context must fail")
	}
	if want := "context holds 8"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestOverflowDropsOldestTurnsKeepingSystem(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	tmpl, err := chat.Builtin("chatml")
	if err != nil {
		t.Fatal(err)
	}
	s.tmpl = tmpl
	s.ctxSize = 160
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "You tell short stories."}}
	for i := 0; i < 6; i++ {
		msgs = append(msgs,
			chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("Tell me story number %d about a cat.", i)},
			chat.Message{Role: chat.RoleAssistant, Content: "Once upon a time there was a cat who liked to play."})
	}
	msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: "And one more."})
	ids, dropped, err := s.fitConversation(msgs, s.replyReserve(0))
	if err != nil {
		t.Fatal(err)
	}
	if dropped == 0 || dropped%2 != 0 {
		t.Fatalf("dropped %d messages, want a positive even number (whole exchanges)", dropped)
	}
	if len(ids)+s.replyReserve(0) > s.ctxSize {
		t.Errorf("%d prompt tokens + reserve exceed the context %d", len(ids), s.ctxSize)
	}
	kept := append(msgs[:1:1], msgs[1+dropped:]...)
	want, err := s.encodeConversation(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, want) {
		t.Error("the fitted prompt is not the system prompt plus the newest turns")
	}
}
