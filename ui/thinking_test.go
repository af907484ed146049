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
	"vkchat/ui/conversation"
	"vkchat/ui/helppane"
)

func TestThinkCommand(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	for _, tc := range []struct {
		in      string
		off     bool
		effort  string
		wantErr string
	}{
		{"/think off", true, "", ""},
		{"/think on", false, "", ""},
		{"/think maybe", false, "", "/think takes on, off, or an effort"},
		{"/think off", true, "", ""},
		{"/think HIGH", false, "high", ""}, // an effort turns thinking on
		{"/think off", true, "high", ""},   // and outlives /think off
		{"/think low", false, "low", ""},
		{"/think extreme", false, "low", "low, medium, high"},
	} {
		c, err := m.cmds.Parse(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		c.Run()
		req := m.nextRequest()
		if m.think.Off != tc.off || req.DisableThinking != tc.off || req.ReasoningEffort != tc.effort {
			t.Errorf("%s: off %v effort %q, request %v %q", tc.in, m.think.Off, m.think.Effort, req.DisableThinking, req.ReasoningEffort)
		}
		if tc.wantErr != "" && (!m.status.err || !strings.Contains(m.status.text, tc.wantErr)) {
			t.Errorf("%s: status %+v", tc.in, m.status)
		}
	}
	if _, err := m.cmds.Parse("/think"); err == nil {
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
	if len(final.conv.Turns()) != 4 {
		t.Fatalf("%d turns, want 4", len(final.conv.Turns()))
	}
	first, second := final.conv.Turns()[1], final.conv.Turns()[3]
	if first.Think == nil || first.Think.Text != "Hmm" || first.Think.Tokens != 3 || first.Content != "Hi!" {
		t.Errorf("first reply: block %+v, answer %q", first.Think, first.Content)
	}
	// Both replies stopped at <|im_end|>: the end of turn, not a limit.
	for i, r := range []*conversation.Turn{first, second} {
		if r.Done == nil || r.Done.Reason != engine.StopEOS {
			t.Errorf("reply %d ended with %+v, want the end of turn", i, r.Done)
		}
	}
	if second.Think != nil || second.Content != "Hi!" || len(second.Steps) != 2 {
		t.Errorf("second reply (thinking off): block %+v, answer %q, %d tokens", second.Think, second.Content, len(second.Steps))
	}
	// The conversation keeps the reasoning as written; the Qwen3 template
	// leaves it out of the next prompt, whose user turn stands for the
	// next message, and thinking off pre-fills the empty block.
	msgs := final.conv.Messages(false)
	if msgs[1].Content != "<think>Hmm</think>Hi!" {
		t.Errorf("kept reply %q", msgs[1].Content)
	}
	if final.pane.Prompt == nil || !strings.Contains(final.pane.Prompt.R.Text, "<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>user\n") ||
		strings.Contains(final.pane.Prompt.R.Text, "Hmm") || !strings.HasSuffix(final.pane.Prompt.R.Text, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
		t.Errorf("prompt: %+v", final.pane.Prompt)
	}
	if c, err := conversation.Read(final.conv.Path(), final.smp.Params); err != nil || len(c.Messages) != 4 || c.Messages[1].Content != "<think>Hmm</think>Hi!" {
		t.Errorf("saved conversation: %+v, %v", c, err)
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
	c, err := m.cmds.Parse("/prompt")
	if err != nil {
		t.Fatal(err)
	}
	c.Run()
	if m.pane.Prompt != nil || !m.status.err || !strings.Contains(m.status.text, "cannot show its prompt") {
		t.Errorf("an engine without RenderPrompt: prompt %v, status %+v", m.pane.Prompt, m.status)
	}
	m.pane.Prompt = &helppane.Prompt{R: engine.RenderedPrompt{Template: "gguf", FoldsSystem: true, OpensThinking: true,
		Text: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n",
		// 107 is Gemma's newline token: special, its text a raw "\n".
		Tokens: []engine.PromptToken{{ID: 1, Text: "<|im_start|>", Special: true}, {ID: 2, Text: "user", Piece: "user"}, {ID: 3, Text: "Ċ", Piece: "\n"},
			{ID: 107, Text: "\n", Piece: "\n", Special: true}}}}
	m.pane.Shown = true
	view := strings.Join(m.pane.Lines(m.styles, m.helpContent(), 60), "\n")
	for _, want := range []string{"template gguf · 4 tokens", "folded into the first user turn", "opens a <think> block",
		"<|im_start|>user\nhi<|im_end|>", "1[<|im_start|>] 2\"user\" 3\"\\n\" 107[↵]"} {
		if !strings.Contains(view, want) {
			t.Errorf("prompt pane lacks %q:\n%s", want, view)
		}
	}
	// Esc closes it, and F1 then shows the keys again.
	h := newHarness(t, m)
	h.key("esc")
	if m.pane.Shown || m.pane.Prompt != nil {
		t.Errorf("esc left the pane open: help %v prompt %v", m.pane.Shown, m.pane.Prompt)
	}
}
