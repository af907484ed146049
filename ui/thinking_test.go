package ui

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/internal/scriptmodel"
	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// thinkingTokens is what the engine emits for "<think>\nHmm\n</think>\n\nHi!".
func thinkingTokens() []engine.TokenInfo {
	return []engine.TokenInfo{
		{Piece: "<think>", Thinking: true, Duration: 100 * time.Millisecond},
		{Piece: "\nHmm\n", Thought: "\nHmm\n", Thinking: true, Duration: 200 * time.Millisecond},
		{Piece: "</think>", Thinking: true, Duration: 300 * time.Millisecond},
		{Piece: "\n\nHi", Answer: "Hi", Duration: 400 * time.Millisecond},
		{Piece: "!", Answer: "!", Duration: 500 * time.Millisecond},
	}
}

func TestThinkingTurn(t *testing.T) {
	tr := &turn{role: "assistant", streaming: true}
	for i, tk := range thinkingTokens() {
		tr.appendToken(tk)
		if open := i < 3; tr.think.open != open {
			t.Errorf("after token %d: open %v, want %v", i, tr.think.open, open)
		}
	}
	b := tr.think
	if tr.content != "Hi!" || b.text != "\nHmm\n" || b.tokens != 3 || b.dur != 600*time.Millisecond {
		t.Errorf("content %q, thought %q, %d tokens, %v", tr.content, b.text, b.tokens, b.dur)
	}
	if tr.modelText() != "<think>\nHmm\n</think>\n\nHi!" {
		t.Errorf("model text %q", tr.modelText())
	}
	// Every step maps into the answer it produced (nothing for the block).
	if len(tr.steps) != 5 || tr.steps[2].start != tr.steps[2].end || tr.content[tr.steps[3].start:tr.steps[3].end] != "Hi" {
		t.Errorf("steps %+v", tr.steps)
	}
	// A reply without reasoning stays raw text.
	plain := &turn{role: "assistant"}
	plain.appendToken(engine.TokenInfo{Piece: "<b>hi</b>", Answer: "<b>hi</b>"})
	if plain.think != nil || plain.content != "<b>hi</b>" {
		t.Errorf("plain reply: %+v", plain)
	}
}

func TestThinkingLoaded(t *testing.T) {
	cases := []struct {
		role, saved     string
		thought, answer string // "" thought: no block
	}{
		{"assistant", "<think>\nHmm\n</think>\n\nHi!", "\nHmm\n", "Hi!"},
		{"assistant", "Hmm</think>Hi!", "Hmm", "Hi!"}, // the prompt opened the block (DeepSeek-R1)
		{"assistant", "just text with </think> in it", "just text with ", "in it"},
		{"assistant", "no block", "", "no block"},
		{"user", "<think>typed</think>", "", "<think>typed</think>"},
	}
	for _, tc := range cases {
		tr := &turn{role: tc.role, content: tc.saved}
		tr.splitLoaded()
		thought := ""
		if tr.think != nil {
			thought = tr.think.text
			if tr.think.raw != tc.saved {
				t.Errorf("%q: raw %q", tc.saved, tr.think.raw)
			}
		}
		if thought != tc.thought || tr.content != tc.answer || tr.modelText() != tc.saved {
			t.Errorf("%q: thought %q answer %q model text %q; want %q %q", tc.saved, thought, tr.content, tr.modelText(), tc.thought, tc.answer)
		}
	}
}

func TestThinkingBlockRender(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	tr := &turn{role: "assistant"}
	for _, tk := range thinkingTokens() {
		tr.appendToken(tk)
	}
	folded := strings.Join(m.thinkingLines(tr, 80), "\n")
	if want := "  ▸ thought · 3 tokens · 0.6 s · ctrl+o to show"; folded != want {
		t.Errorf("folded:\n%q\nwant\n%q", folded, want)
	}
	m.toggleThinking()
	open := m.thinkingLines(tr, 80)
	if len(open) != 2 || !strings.HasPrefix(open[0], "  ▾ thought") || open[1] != "  │ Hmm" {
		t.Errorf("expanded: %q", open)
	}
	tr.streaming, tr.think.open = true, true
	if l := m.thinkingLines(tr, 80); !strings.Contains(l[0], "thinking…") {
		t.Errorf("streaming: %q", l[0])
	}
}

func TestThinkCommand(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	for _, tc := range []struct {
		in      string
		off     bool
		wantErr string
	}{
		{"/think off", true, ""},
		{"/think on", false, ""},
		{"/think maybe", false, "/think takes on or off"},
	} {
		c, err := ParseCommand(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		m.runCommand(c)
		if m.think.off != tc.off || m.nextRequest().DisableThinking != tc.off {
			t.Errorf("%s: off %v, request %v", tc.in, m.think.off, m.nextRequest().DisableThinking)
		}
		if tc.wantErr != "" && (!m.status.err || !strings.Contains(m.status.text, tc.wantErr)) {
			t.Errorf("%s: status %+v", tc.in, m.status)
		}
	}
	if _, err := ParseCommand("/think"); err == nil {
		t.Error("/think without an argument parsed")
	}
}

// TestThinkingModelEndToEnd runs the real program and engine on a qwen3
// model with the real Qwen3 vocabulary and chat template. Its weights are
// scripted (internal/scriptmodel): greedy decoding writes
// "<think>Hmm</think>Hi!" and then <|im_end|>, which a random model would
// never do; with /think off the template pre-fills an empty block and the
// same model answers "Hi!" at once.
func TestThinkingModelEndToEnd(t *testing.T) {
	sm, err := scriptmodel.WriteQwen3Thinker(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"),
		filepath.Join(t.TempDir(), "qwen3-thinker.gguf"), "qwen3")
	if err != nil {
		t.Fatal(err)
	}
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), sm.Path, engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 32})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 36))
	t.Cleanup(func() { _ = tm.Quit() })
	// The terminal output is a stream that each WaitFor reads on from, and
	// the renderer writes a row once, so look for text in all of it.
	var seen []byte
	wait := func(what, text string) {
		t.Helper()
		base := seen
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			all := append(base[:len(base):len(base)], b...)
			if bytes.Contains(all, []byte(text)) {
				seen = all
				return true
			}
			return false
		}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
		if !bytes.Contains(seen, []byte(text)) {
			t.Fatalf("%s: %q never shown", what, text)
		}
	}

	tm.Type("hello")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("the folded block", "▸ thought · 3 tokens")
	wait("the answer", "Hi!")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlO})
	wait("the reasoning", "│ Hmm")
	tm.Type("/think off")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tm.Type("again")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("the second reply's end", "2 tokens")
	tm.Type("/prompt")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("the prompt pane", "Prompt of the next reply")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})

	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	if len(final.turns) != 4 {
		t.Fatalf("%d turns, want 4", len(final.turns))
	}
	first, second := final.turns[1], final.turns[3]
	if first.think == nil || first.think.text != "Hmm" || first.think.tokens != 3 || first.content != "Hi!" {
		t.Errorf("first reply: block %+v, answer %q", first.think, first.content)
	}
	// Both replies stopped at <|im_end|>: the end of turn, not a limit.
	for i, r := range []*turn{first, second} {
		if r.done == nil || r.done.Reason != engine.StopEOS {
			t.Errorf("reply %d ended with %+v, want the end of turn", i, r.done)
		}
	}
	if second.think != nil || second.content != "Hi!" || len(second.steps) != 2 {
		t.Errorf("second reply (thinking off): block %+v, answer %q, %d tokens", second.think, second.content, len(second.steps))
	}
	// The conversation keeps the reasoning as written; the Qwen3 template
	// leaves it out of the next prompt, and thinking off pre-fills the
	// empty block.
	msgs := final.messages(false)
	if msgs[1].Content != "<think>Hmm</think>Hi!" {
		t.Errorf("kept reply %q", msgs[1].Content)
	}
	if final.prompt == nil || !strings.Contains(final.prompt.Text, "<|im_start|>assistant\nHi!<|im_end|>") ||
		strings.Contains(final.prompt.Text, "Hmm") || !strings.HasSuffix(final.prompt.Text, "<think>\n\n</think>\n\n") {
		t.Errorf("prompt: %+v", final.prompt)
	}
	if c, err := readConversation(final.savePath, final.params); err != nil || len(c.Messages) != 4 || c.Messages[1].Content != "<think>Hmm</think>Hi!" {
		t.Errorf("saved conversation: %+v, %v", c, err)
	}
}

// TestThinkingFork: a fork keeps a prefix of the steps; a reply with
// reasoning gets its block and raw text back from them.
func TestThinkingFork(t *testing.T) {
	full := &turn{role: "assistant"}
	for _, tk := range thinkingTokens() {
		full.appendToken(tk)
	}
	for _, k := range []int{2, 4} {
		kept, ok := full.prefix(k)
		if !ok {
			t.Fatalf("fork at %d: no prefix", k)
		}
		r := &turn{role: "assistant", content: kept.content, steps: kept.steps, detail: kept.detail, think: kept.think}
		wantRaw := strings.Join([]string{"<think>", "\nHmm\n", "</think>", "\n\nHi"}[:k], "")
		if r.think == nil || r.think.raw != wantRaw || r.think.text != "\nHmm\n" || r.modelText() != wantRaw {
			t.Errorf("fork at %d: %+v, model text %q; want raw %q", k, r.think, r.modelText(), wantRaw)
		}
		// The kept steps rebuild as they were recorded.
		for j := range k {
			got, want := mustStepInfo(t, r, j), mustStepInfo(t, full, j)
			if got.Piece != want.Piece || got.Thought != want.Thought || got.Thinking != want.Thinking {
				t.Errorf("fork at %d, step %d: %+v, want %+v", k, j, got, want)
			}
		}
	}
	plain := &turn{role: "assistant"}
	plain.appendToken(engine.TokenInfo{Piece: "a"})
	plain.appendToken(engine.TokenInfo{Piece: "b"})
	kept, ok := plain.prefix(1)
	if !ok || kept.think != nil || kept.content != "a" || len(kept.steps) != 1 {
		t.Errorf("plain reply's prefix: %+v", kept)
	}
}

func TestNoThinkingConfig(t *testing.T) {
	for _, off := range []bool{false, true} {
		m := newTestModel(t, newFakeEngine(), Config{NoThinking: off})
		if m.nextRequest().DisableThinking != off {
			t.Errorf("Config.NoThinking %v: request DisableThinking %v", off, m.nextRequest().DisableThinking)
		}
	}
}

func TestPromptPane(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	c, err := ParseCommand("/prompt")
	if err != nil {
		t.Fatal(err)
	}
	m.runCommand(c)
	if m.prompt != nil || !m.status.err || !strings.Contains(m.status.text, "cannot show its prompt") {
		t.Errorf("an engine without RenderPrompt: prompt %v, status %+v", m.prompt, m.status)
	}
	m.prompt = &engine.RenderedPrompt{Template: "gguf", FoldsSystem: true, OpensThinking: true,
		Text:   "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n",
		Tokens: []engine.PromptToken{{ID: 1, Text: "<|im_start|>", Special: true}, {ID: 2, Text: "user", Piece: "user"}, {ID: 3, Text: "Ċ", Piece: "\n"}}}
	m.showHelp = true
	view := strings.Join(m.helpLines(60), "\n")
	for _, want := range []string{"template gguf · 3 tokens", "folded into the first user turn", "opens a <think> block",
		"<|im_start|>user\nhi<|im_end|>", "1[<|im_start|>] 2\"user\" 3\"\\n\""} {
		if !strings.Contains(view, want) {
			t.Errorf("prompt pane lacks %q:\n%s", want, view)
		}
	}
	// Esc closes it, and F1 then shows the keys again.
	h := newHarness(t, m)
	h.key("esc")
	if m.showHelp || m.prompt != nil {
		t.Errorf("esc left the pane open: help %v prompt %v", m.showHelp, m.prompt)
	}
}
