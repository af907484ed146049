package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
	"vkchat/ui/sampler"
)

func TestSamplerKeys(t *testing.T) {
	d := sample.Defaults()
	with := func(f func(*sample.Params)) sample.Params { p := d; f(&p); return p }
	tests := []struct {
		key   string
		want  sample.Params
		shown string // what the status line says
	}{
		{"alt+t", with(func(p *sample.Params) { p.Temperature = 0.7 }), "temp 0.70"},
		{"alt+T", with(func(p *sample.Params) { p.Temperature = 0.9 }), "temp 0.90"},
		{"alt+p", with(func(p *sample.Params) { p.TopP = 0.9 }), "top-p 0.90"},
		{"alt+P", with(func(p *sample.Params) { p.TopP = 1 }), "top-p off"},
		{"alt+k", with(func(p *sample.Params) { p.TopK = 35 }), "top-k 35"},
		{"alt+K", with(func(p *sample.Params) { p.TopK = 45 }), "top-k 45"},
		{"alt+m", with(func(p *sample.Params) { p.MinP = 0.04 }), "min-p 0.04"},
		{"alt+M", with(func(p *sample.Params) { p.MinP = 0.06 }), "min-p 0.06"},
		{"alt+r", with(func(p *sample.Params) { p.RepeatPenalty = 0.95 }), "repeat 0.95"},
		{"alt+R", with(func(p *sample.Params) { p.RepeatPenalty = 1.05 }), "repeat 1.05"},
		{"alt+s", with(func(p *sample.Params) { p.Seed = 1001 }), "seed 1001"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			eng := newFakeEngine()
			m := newTestModel(t, eng, Config{})
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			_, cmd := m.Update(keyMsg(tt.key))
			if m.smp.Params != tt.want {
				t.Fatalf("params = %+v, want %+v", m.smp.Params, tt.want)
			}
			if n := len(eng.setParamsCalls()); n != 1 || eng.setParamsCalls()[0] != tt.want {
				t.Fatalf("SetParams calls = %+v", eng.setParamsCalls())
			}
			if cmd == nil {
				t.Fatal("no preview command")
			}
			m.Update(cmd())
			if eng.previewCount() != 1 {
				t.Fatalf("Preview called %d times", eng.previewCount())
			}
			// Nothing generated yet: the panel keeps its state and says so.
			if !strings.Contains(m.status.text, tt.shown) || !strings.Contains(m.status.text, "next token") {
				t.Errorf("status %q, want %q and a note that it applies from the next token", m.status.text, tt.shown)
			}
			if !strings.Contains(m.View(), strings.Fields(tt.shown)[0]+" "+strings.Fields(tt.shown)[1]) {
				t.Errorf("the new value %q is not on screen", tt.shown)
			}
		})
	}
}

func TestSamplerKeyRePreviewsAfterAReply(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hi")
	before := m.insp.Probs
	h.key("alt+t")
	h.waitFor("the preview", func() bool { return strings.HasPrefix(m.insp.Probs.Title, "preview") })
	want := rank(eng.lastCandidates(), m.smp.Params)
	if m.insp.Probs.Candidates[0].Final != want.Candidates[0].Final || m.insp.Probs.Candidates[0].Final == before.Candidates[0].Final {
		t.Errorf("preview drawn p = %v, want %v (was %v)", m.insp.Probs.Candidates[0].Final, want.Candidates[0].Final, before.Candidates[0].Final)
	}
	if eng.requestCount() != 1 {
		t.Error("a sampler change started a generation")
	}
	if !strings.Contains(m.View(), "preview · new settings") {
		t.Error("the panel does not say it shows a preview")
	}
}

func TestStalePreviewIsDropped(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	m.insp.Probs.Title = "step 3"
	p := m.smp.Params
	p.Temperature = 0.3
	first := m.smp.Change(p)
	p.Temperature = 0.4
	m.smp.Change(p)
	msg := first().(sampler.PreviewMsg)
	msg.OK, msg.Res = true, sample.Result{Candidates: []sample.Candidate{{ID: 1}}}
	m.Update(msg)
	if m.insp.Probs.Title != "step 3" {
		t.Error("an overtaken preview replaced the panel")
	}
}

func TestSlashCommandsChangeParams(t *testing.T) {
	tests := []struct {
		line string
		want func(sample.Params) bool
	}{
		{"/temp 0.3", func(p sample.Params) bool { return p.Temperature == 0.3 }},
		{"/top-p 0.5", func(p sample.Params) bool { return p.TopP == 0.5 }},
		{"/top-k 7", func(p sample.Params) bool { return p.TopK == 7 }},
		{"/min-p 0.2", func(p sample.Params) bool { return p.MinP == 0.2 }},
		{"/repeat 1.3", func(p sample.Params) bool { return p.RepeatPenalty == 1.3 }},
		{"/seed 42", func(p sample.Params) bool { return p.Seed == 42 }},
		{"/seed", func(p sample.Params) bool { return p.Seed == 1001 }},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			eng := newFakeEngine()
			m := newTestModel(t, eng, Config{})
			h := newHarness(t, m)
			h.size(100, 30)
			h.typeText(tt.line)
			h.key("enter")
			if !tt.want(m.smp.Params) || len(eng.setParamsCalls()) != 1 || !tt.want(eng.setParamsCalls()[0]) {
				t.Fatalf("params %+v, SetParams %+v", m.smp.Params, eng.setParamsCalls())
			}
			if m.input.Value() != "" || len(m.conv.Turns()) != 0 || eng.requestCount() != 0 {
				t.Error("a command was sent as a message")
			}
		})
	}
}

// TestBadSlashCommandKeepsTheLine: a command that does not parse changes
// nothing and says why; its line leaves the input (the next command is not
// typed onto it) but stays in the history, ↑ away, to be fixed.
func TestBadSlashCommandKeepsTheLine(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.typeText("/temp hot")
	h.key("enter")
	if !m.status.err || !strings.Contains(m.status.text, `"hot" is not a number`) {
		t.Fatalf("status = %+v", m.status)
	}
	if m.input.Value() != "" {
		t.Errorf("input = %q, want it cleared for the next command", m.input.Value())
	}
	if len(eng.setParamsCalls()) != 0 || eng.requestCount() != 0 {
		t.Error("a bad command changed something")
	}
	if !strings.Contains(m.View(), `"hot" is not a number`) {
		t.Error("the error is not on screen")
	}
	h.key("up")
	if m.input.Value() != "/temp hot" {
		t.Errorf("↑ brought back %q, want the line kept for fixing", m.input.Value())
	}
}

func TestDoubleSlashSendsALiteralSlash(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("//etc/hosts is a file")
	if got := eng.lastRequest().Messages[0].Content; got != "/etc/hosts is a file" {
		t.Errorf("sent %q", got)
	}
}

func TestControlKeys(t *testing.T) {
	t.Run("enter sends, empty enter does nothing", func(t *testing.T) {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.key("enter")
		if eng.requestCount() != 0 || len(m.conv.Turns()) != 0 {
			t.Fatal("empty input was sent")
		}
		h.say("hello")
		if len(m.conv.Turns()) != 2 || m.conv.Turns()[0].Content != "hello" || m.conv.Turns()[1].Content != strings.Join(fakeReplyCode, "") {
			t.Fatalf("turns = %+v", m.conv.Turns())
		}
		if m.input.Value() != "" {
			t.Error("input not cleared")
		}
	})
	t.Run("alt+enter and ctrl+j insert a newline", func(t *testing.T) {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("a")
		h.key("alt+enter")
		h.typeText("b")
		h.key("ctrl+j")
		h.typeText("c")
		if got := m.input.Value(); got != "a\nb\nc" {
			t.Fatalf("input = %q", got)
		}
		if len(m.conv.Turns()) != 0 {
			t.Fatal("newline sent the message")
		}
	})
	t.Run("esc stops and keeps the partial reply", func(t *testing.T) {
		eng := newFakeEngine()
		eng.holdAfter = 5
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("hi")
		h.key("enter")
		h.waitFor("5 tokens", func() bool { return len(m.conv.Last().Steps) == 5 })
		h.key("esc")
		h.idle()
		r := m.conv.Last()
		if r.Role != "assistant" || r.Content != strings.Join(fakeReplyCode[:5], "") {
			t.Fatalf("reply = %q", r.Content)
		}
		if len(r.Notes) != 1 || r.Notes[0].Text != "stopped" {
			t.Errorf("notes = %+v", r.Notes)
		}
		if !strings.Contains(m.View(), "■ stopped") {
			t.Error("no stopped notice on screen")
		}
		// The partial reply is part of the conversation from now on.
		h.say("go on")
		msgs := eng.lastRequest().Messages
		if len(msgs) != 3 || msgs[1].Content != strings.Join(fakeReplyCode[:5], "") {
			t.Errorf("next request = %+v", msgs)
		}
	})
	t.Run("esc without a reply running does nothing", func(t *testing.T) {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("draft")
		h.key("esc")
		if m.input.Value() != "draft" || m.gen != nil {
			t.Fatal("esc changed something")
		}
	})
	t.Run("ctrl+r regenerates the last reply", func(t *testing.T) {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.say("hello")
		h.key("ctrl+r")
		h.idle()
		if len(m.conv.Turns()) != 2 || m.conv.Turns()[1].Content != strings.Join(fakeReplyShort, "") {
			t.Fatalf("turns after regenerate: %d, last %q", len(m.conv.Turns()), m.conv.Last().Content)
		}
		msgs := eng.lastRequest().Messages
		if len(msgs) != 1 || msgs[0].Content != "hello" {
			t.Errorf("regenerate request = %+v", msgs)
		}
	})
	t.Run("ctrl+r with nothing to regenerate", func(t *testing.T) {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.key("ctrl+r")
		if eng.requestCount() != 0 || !m.status.err {
			t.Fatal("regenerated nothing")
		}
	})
	t.Run("ctrl+n starts a new chat and keeps the old one saved", func(t *testing.T) {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{SystemPrompt: "be brief"})
		h := newHarness(t, m)
		h.size(100, 30)
		h.say("hello")
		old := m.conv.Path()
		h.key("ctrl+n")
		if len(m.conv.Turns()) != 0 || m.conv.Path() != "" || m.conv.System() != "be brief" {
			t.Fatalf("after ctrl+n: %d turns, path %q, system %q", len(m.conv.Turns()), m.conv.Path(), m.conv.System())
		}
		c, err := conversation.Read(old, sample.Defaults())
		if err != nil || len(c.Messages) != 3 {
			t.Fatalf("old chat: %v, %+v", err, c.Messages)
		}
	})
	t.Run("ctrl+n while generating", func(t *testing.T) {
		eng := newFakeEngine()
		eng.holdAfter = 3
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("hello")
		h.key("enter")
		h.waitFor("3 tokens", func() bool { return len(m.conv.Last().Steps) == 3 })
		h.key("ctrl+n")
		if len(m.conv.Turns()) != 0 {
			t.Fatal("chat not cleared")
		}
		// A message typed before the old reply has wound down still gets its reply.
		h.typeText("fresh")
		h.key("enter")
		h.waitFor("the new reply", func() bool { return m.gen == nil && len(m.conv.Turns()) == 2 })
		if m.conv.Turns()[0].Content != "fresh" || len(eng.lastRequest().Messages) != 1 {
			t.Fatalf("turns %+v, request %+v", m.conv.Turns(), eng.lastRequest())
		}
	})
	t.Run("enter while generating is refused", func(t *testing.T) {
		eng := newFakeEngine()
		eng.holdAfter = 2
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("one")
		h.key("enter")
		h.waitFor("2 tokens", func() bool { return len(m.conv.Last().Steps) == 2 })
		h.typeText("two")
		h.key("enter")
		if !m.status.err || m.input.Value() != "two" || eng.requestCount() != 1 {
			t.Fatalf("status %+v, input %q", m.status, m.input.Value())
		}
		close(eng.release)
		h.idle()
	})
	t.Run("tab toggles the inspector", func(t *testing.T) {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.key("tab")
		if m.focus != focusInput || !strings.Contains(m.status.text, "nothing to inspect") {
			t.Fatal("inspector opened with nothing to inspect")
		}
		h.say("hi")
		h.key("tab")
		if m.focus != focusTranscript || m.input.Focused() {
			t.Fatal("tab did not focus the transcript")
		}
		h.key("tab")
		if m.focus != focusInput || !m.input.Focused() {
			t.Fatal("tab did not return to the input")
		}
	})
	t.Run("f1 toggles help, esc closes it", func(t *testing.T) {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.key("f1")
		if v := m.View(); !m.pane.Shown || !strings.Contains(v, "Keys") || !strings.Contains(v, "ctrl+c") {
			t.Fatalf("help not shown:\n%s", v)
		}
		for range 20 {
			h.key("pgdown")
		}
		if v := m.View(); !strings.Contains(v, "/quit") {
			t.Fatalf("the commands are not further down the help:\n%s", v)
		}
		h.key("esc")
		if m.pane.Shown {
			t.Fatal("esc did not close help")
		}
		h.typeText("/help")
		h.key("enter")
		if !m.pane.Shown {
			t.Fatal("/help did not open help")
		}
		h.key("f1")
		if m.pane.Shown {
			t.Fatal("f1 did not close help")
		}
	})
	t.Run("pgup and pgdown scroll", func(t *testing.T) {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(80, 24)
		h.say("one")
		h.say("two")
		m.View()
		bottom := m.tr.YOffset()
		h.key("pgup")
		m.View()
		if m.tr.Following() || m.tr.YOffset() >= bottom {
			t.Fatalf("pgup: offset %d (bottom %d), follow %v", m.tr.YOffset(), bottom, m.tr.Following())
		}
		if !strings.Contains(m.View(), "scrolled up") {
			t.Error("no hint that the view is scrolled")
		}
		h.key("pgdown", "pgdown", "pgdown")
		m.View()
		if !m.tr.Following() || m.tr.YOffset() != bottom {
			t.Fatalf("pgdown: offset %d, follow %v", m.tr.YOffset(), m.tr.Following())
		}
	})
	t.Run("ctrl+c stops the reply, a second one saves and quits", func(t *testing.T) {
		eng := newFakeEngine()
		eng.holdAfter = 4
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("bye")
		h.key("enter")
		h.waitFor("4 tokens", func() bool { return len(m.conv.Last().Steps) == 4 })
		if _, cmd := m.Update(keyMsg("ctrl+c")); cmd != nil || !m.gen.canceled {
			t.Fatal("the first ctrl+c mid-reply did not stop it, or quit")
		}
		if !strings.Contains(m.status.text, "ctrl+c again quits") {
			t.Errorf("status %q does not say a second ctrl+c quits", m.status.text)
		}
		_, cmd := m.Update(keyMsg("ctrl+c"))
		if cmd == nil {
			t.Fatal("no quit command")
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatal("ctrl+c did not quit")
		}
		c, err := conversation.Read(m.conv.Path(), sample.Defaults())
		if err != nil || len(c.Messages) != 2 || c.Messages[1].Content != strings.Join(fakeReplyCode[:4], "") {
			t.Fatalf("saved on quit: %v %+v", err, c.Messages)
		}
		if err := m.waitEngine(5e9); err != nil {
			t.Fatal(err)
		}
	})
}

func TestHelpScreenScrolls(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	h.key("f1")
	first := m.View()
	if !strings.Contains(first, "pgdn for more") || strings.Contains(first, "/quit") {
		t.Fatalf("first help page:\n%s", first)
	}
	for range 20 {
		h.key("pgdown")
	}
	last := m.View()
	if !strings.Contains(last, "/quit") || !strings.Contains(last, "Conversations are saved in") {
		t.Fatalf("last help page:\n%s", last)
	}
	checkScreen(t, last, 80, 24)
	for range 20 {
		h.key("pgup")
	}
	if m.View() != first {
		t.Error("pgup did not return to the first page")
	}
}
