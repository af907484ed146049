package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/internal/stream"
)

func TestWaitStreamCoalesces(t *testing.T) {
	q := stream.NewQueue(16)
	ch := q.C
	closed := make(chan struct{})
	for i := range 5 {
		ch <- stream.Item{Ev: engine.Event{Kind: engine.EventToken, Token: &engine.TokenInfo{Index: i}}}
	}
	msg := q.Wait(7, closed)().(stream.Msg)
	if msg.Gen != 7 || len(msg.Items) != 5 {
		t.Fatalf("got gen %d with %d items, want all 5 queued events in one message", msg.Gen, len(msg.Items))
	}
	// The end item closes a batch; what follows is never read.
	ch <- stream.Item{Ev: engine.Event{Kind: engine.EventToken, Token: &engine.TokenInfo{}}}
	ch <- stream.Item{End: true}
	ch <- stream.Item{Ev: engine.Event{Kind: engine.EventToken, Token: &engine.TokenInfo{}}}
	msg = q.Wait(7, closed)().(stream.Msg)
	if len(msg.Items) != 2 || !msg.Items[1].End {
		t.Fatalf("batch across the end: %+v", msg.Items)
	}
	// A burst larger than stream.MaxBatch is split so frames still happen.
	big := stream.NewQueue(stream.MaxBatch + 10)
	for range stream.MaxBatch + 10 {
		big.C <- stream.Item{}
	}
	if msg = big.Wait(1, closed)().(stream.Msg); len(msg.Items) != stream.MaxBatch {
		t.Fatalf("batch of %d, want %d", len(msg.Items), stream.MaxBatch)
	}
	close(closed)
	if got := stream.NewQueue(0).Wait(1, closed)(); got != nil {
		t.Fatalf("after quit the wait returned %v", got)
	}
}

func TestStaleStreamMessagesAreIgnored(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	m.gen = &generation{id: 3, reply: &conversation.Turn{Role: "assistant", Streaming: true}, cancel: func() {}, ch: stream.NewQueue(0)}
	m.conv.Append(m.gen.reply)
	cmd := m.handleStream(stream.Msg{Gen: 2, Items: []stream.Item{{Ev: engine.Event{Kind: engine.EventToken, Token: &engine.TokenInfo{Piece: "x"}}}}})
	if cmd != nil || m.gen.reply.Content != "" {
		t.Fatal("a message from an old generation was applied")
	}
}

func TestStreamingUpdatesPanels(t *testing.T) {
	eng := newFakeEngine()
	eng.holdAfter = 3
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.typeText("hi")
	h.key("enter")
	h.waitFor("3 tokens", func() bool { return len(m.conv.Last().Steps) == 3 })
	if m.run.Prefill == nil || m.run.Prefill.Tokens == 0 || m.run.TTFT == 0 || m.run.Generated != 3 || len(m.run.Speeds) != 2 {
		t.Fatalf("run stats %+v", m.run)
	}
	if m.stats.ContextUsed == 0 || m.insp.Probs.Title != "step 3" {
		t.Fatalf("stats %+v, panel %q", m.stats, m.insp.Probs.Title)
	}
	// The sampler keeps working mid-stream, and its change reaches the
	// engine before the next token.
	h.key("alt+T")
	if eng.Params().Temperature != 0.9 {
		t.Fatal("SetParams not called during generation")
	}
	close(eng.release)
	h.idle()
	if got := mustStepInfo(t, m.conv.Last(), 3).Params.Temperature; got != 0.9 {
		t.Errorf("token after the change drawn at temperature %v", got)
	}
	if m.run.Done == nil || m.run.Done.Reason != engine.StopEOS {
		t.Fatalf("done = %+v", m.run.Done)
	}
}

func TestModelOutputIsSanitized(t *testing.T) {
	eng := newFakeEngine()
	// An OSC 52 clipboard write split across tokens, a CSI clear screen
	// and a terminal reset.
	eng.replies = [][]string{{"safe", "\x1b]52;c;", "cHduZWQ=", "\x07", " text", "\x1b[2J", "\x1bc", " end"}}
	for _, p := range eng.replies[0] {
		eng.id(p)
	}
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hi")
	view := m.View()
	if strings.ContainsAny(view, "\x1b\x07") {
		t.Fatalf("control bytes reached the screen: %q", view)
	}
	if !strings.Contains(view, "safe text end") {
		t.Errorf("the text around the sequences is missing:\n%s", view)
	}
	if strings.Contains(view, "cHduZWQ=") {
		t.Error("the body of the OSC sequence was shown")
	}
	// The conversation keeps the raw bytes: they are what the model said.
	if m.conv.Last().Content != strings.Join(eng.replies[0], "") {
		t.Error("raw reply altered")
	}
}

func TestModelMetadataIsSanitized(t *testing.T) {
	eng := newFakeEngine()
	eng.info.Name = "evil\x1b]52;c;aGk=\x07model"
	eng.info.Device = "GPU\x1b[2J"
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 30)
	h.say("hi")
	if v := m.View(); strings.ContainsAny(v, "\x1b\x07") || !strings.Contains(v, "evilmodel") {
		t.Fatalf("metadata not sanitized: %q", v)
	}
}

func TestEngineErrorKeepsTheConversation(t *testing.T) {
	eng := newFakeEngine()
	eng.doneErr = errFake
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	if len(m.conv.Turns()) != 2 || m.conv.Turns()[0].Content != "hello" || m.conv.Turns()[1].Content == "" {
		t.Fatalf("turns %+v", m.conv.Turns())
	}
	view := m.View()
	if !strings.Contains(view, "engine error: device lost") {
		t.Errorf("error not on screen:\n%s", view)
	}
	if n := strings.Count(view, "device lost"); n > 2 {
		t.Errorf("error shown %d times", n)
	}
	c, err := conversation.Read(m.conv.Path(), m.smp.Params)
	if err != nil || len(c.Messages) != 2 {
		t.Fatalf("saved: %v %+v", err, c.Messages)
	}
	// The UI is still usable.
	eng.doneErr = nil
	h.say("again")
	if len(m.conv.Turns()) != 4 {
		t.Fatalf("%d turns after retry", len(m.conv.Turns()))
	}
}

func TestGenerateFailingEarly(t *testing.T) {
	eng := newFakeEngine()
	eng.genErr = errors.New("prompt too long for the context")
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	if len(m.conv.Turns()) != 1 || m.conv.Turns()[0].Role != "user" {
		t.Fatalf("turns %+v", m.conv.Turns())
	}
	if n := m.conv.Turns()[0].Notes; len(n) != 1 || n[0].Kind != conversation.NoteError {
		t.Fatalf("notes %+v", n)
	}
	if !strings.Contains(m.View(), "prompt too long") {
		t.Error("error not on screen")
	}
}

func TestEnginePanicIsReported(t *testing.T) {
	eng := newFakeEngine()
	eng.panicMsg = "index out of range"
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	if !strings.Contains(m.View(), "engine panic: index out of range") {
		t.Errorf("panic not reported:\n%s", m.View())
	}
}

func TestCanceledContextIsNotAnError(t *testing.T) {
	eng := newFakeEngine()
	eng.holdAfter = 1
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.typeText("x")
	h.key("enter")
	h.waitFor("a token", func() bool { return len(m.conv.Last().Steps) == 1 })
	h.key("esc")
	h.idle()
	for _, n := range m.conv.Last().Notes {
		if n.Kind == conversation.NoteError {
			t.Fatalf("cancel reported as an error: %+v", n)
		}
	}
	if m.status.err {
		t.Fatalf("status %+v", m.status)
	}
}

func TestDroppedMessagesNotice(t *testing.T) {
	eng := newFakeEngine()
	eng.dropped = 3
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hello")
	if v := m.View(); !strings.Contains(v, "3 older messages were left out so the conversation fits the 2048-token context") {
		t.Errorf("no dropped notice:\n%s", v)
	}
}

func TestStopReasonsAreShown(t *testing.T) {
	for reason, want := range map[engine.StopReason]string{
		engine.StopMaxTokens: "token limit",
		engine.StopContext:   "filled the 2048-token context and stopped; the next message leaves the oldest turns out",
	} {
		m := newTestModel(t, newFakeEngine(), Config{})
		r := &conversation.Turn{Role: "assistant", Streaming: true}
		m.conv.Append([]*conversation.Turn{{Role: "user", Content: "x"}, r}...)
		g := &generation{id: 1, reply: r, cancel: func() {}}
		m.applyEvent(g, engine.Event{Kind: engine.EventDone, Done: &engine.DoneInfo{Reason: reason, Generated: 8}})
		if len(r.Notes) != 1 || !strings.Contains(r.Notes[0].Text, want) {
			t.Errorf("%s: notes %+v", reason, r.Notes)
		}
	}
}

func TestCompletionMode(t *testing.T) {
	eng := newFakeEngine()
	eng.info.Completion = true
	eng.info.TemplateName = ""
	m := newTestModel(t, eng, Config{SystemPrompt: "ignored in completion mode"})
	h := newHarness(t, m)
	h.size(100, 30)
	h.typeText("Once upon a time ")
	h.key("enter")
	h.idle()
	req := eng.lastRequest()
	if len(req.Messages) != 1 || req.Messages[0].Content != "Once upon a time " {
		t.Fatalf("request %+v: completion text must be sent exactly, without a system prompt", req.Messages)
	}
	view := m.View()
	if !strings.Contains(view, "Once upon a time Here is a tiny") {
		t.Errorf("not one running text:\n%s", view)
	}
	if strings.Contains(view, "▌ You") || !strings.Contains(view, "completion") {
		t.Error("completion mode shows chat labels or does not say it is in completion mode")
	}
	// Enter on an empty input continues the text.
	h.key("enter")
	h.idle()
	if eng.requestCount() != 2 || len(eng.lastRequest().Messages) != 2 {
		t.Fatalf("continue: %d requests, last %+v", eng.requestCount(), eng.lastRequest().Messages)
	}
	h.typeText("/system x")
	h.key("enter")
	if !m.status.err {
		t.Error("/system accepted in completion mode")
	}
}

func TestPrefillTimer(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	now := testClock
	m.now = func() time.Time { return now }
	m.width, m.height = 100, 30
	m.gen = &generation{id: 4, started: now, cancel: func() {}}
	if cmd := m.handleTick(stream.TickMsg{Gen: 4}); cmd == nil {
		t.Fatal("the timer stopped while the prompt is read")
	}
	if cmd := m.handleTick(stream.TickMsg{Gen: 3}); cmd != nil {
		t.Fatal("a stale tick started a second chain")
	}
	now = now.Add(2300 * time.Millisecond)
	if v := m.View(); !strings.Contains(v, "reading prompt 2.30s") {
		t.Errorf("no elapsed time in the title:\n%s", strings.SplitN(v, "\n", 2)[0])
	}
	// Read, but no token yet: the time to first token still counts up.
	m.run.Prefill = &engine.PrefillInfo{}
	if cmd := m.handleTick(stream.TickMsg{Gen: 4}); cmd == nil {
		t.Fatal("the timer stopped before the first token")
	}
	if v := m.View(); !strings.Contains(v, "first tok 2.30s…") {
		t.Errorf("time to first token not counting up:\n%s", v)
	}
	m.run.Generated = 1
	if cmd := m.handleTick(stream.TickMsg{Gen: 4}); cmd != nil {
		t.Fatal("the timer kept ticking after the first token")
	}
}

// A program that ends while a batch of events is on its way to Update (a
// signal, a quit mid-reply) drops that message. Shutdown must still apply
// the batch, before the events queued after it: otherwise the saved reply
// lost tokens in its middle ("w39 w41" on a SIGTERM,
// TestRunSIGTERMMidReplyLooped).
func TestShutdownKeepsTheBatchInFlight(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	g := &generation{id: 3, reply: &conversation.Turn{Role: "assistant", Streaming: true}, cancel: func() {}, ch: stream.NewQueue(16)}
	m.gen = g
	m.conv.Append(g.reply)
	tok := func(i int) stream.Item {
		return stream.Item{Ev: engine.Event{Kind: engine.EventToken, Token: &engine.TokenInfo{Index: i, Piece: fmt.Sprintf(" t%d", i)}}}
	}
	for i := range 3 {
		g.ch.C <- tok(i)
	}
	if msg, ok := g.ch.Wait(g.id, m.closed)().(stream.Msg); !ok || len(msg.Items) != 3 {
		t.Fatalf("the wait took %v, want the three queued tokens", msg)
	}
	// The message above never reaches Update; two more tokens queue.
	for i := 3; i < 5; i++ {
		g.ch.C <- tok(i)
	}
	m.shutdown()
	if got, want := g.reply.Content, " t0 t1 t2 t3 t4"; got != want {
		t.Fatalf("reply after shutdown %q, want %q", got, want)
	}
	// A wait that starts after the end takes nothing.
	g.ch.C <- tok(5)
	if got := g.ch.Wait(g.id, m.closed)(); got != nil {
		t.Fatalf("a wait after shutdown returned %v", got)
	}
}
