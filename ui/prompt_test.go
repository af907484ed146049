package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/scriptmodel"
	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// TestPromptOnQwen3 is /prompt on a qwen3 model with the real Qwen3
// vocabulary and chat template (scripted weights: greedy decoding writes
// "<think>Hmm</think>Hi!"). Qwen3's template fails on an empty
// conversation ("messages[item] is undefined"), re-renders the reasoning
// of a final reply (which the content markers cannot follow), and after a
// reply opens a second assistant turn; the prompt of the next reply has a
// user turn standing for the message not yet written. The expected texts
// are Qwen3's ChatML as its template writes it.
func TestPromptOnQwen3(t *testing.T) {
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
	h := newHarness(t, m)
	h.size(120, 40)

	const afterReply = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>user\n(your next message)<|im_end|>\n<|im_start|>assistant\n"
	steps := []struct {
		name     string
		before   func()
		command  string
		wantText string
		onScreen []string
	}{
		{"fresh chat", nil, "/prompt", "<|im_start|>user\n(your next message)<|im_end|>\n<|im_start|>assistant\n",
			[]string{"<|im_start|>user", "(your next message)<|im_end|>", "stands for your next message"}},
		{"fresh chat, /prompt TEXT", nil, "/prompt why is the sky blue?", "<|im_start|>user\nwhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n",
			[]string{"why is the sky blue?<|im_end|>"}},
		{"after a reply with reasoning", func() { h.say("hello") }, "/prompt", afterReply,
			[]string{"<|im_start|>user", "Hi!<|im_end|>"}},
		{"after a reply with reasoning, thinking off", func() { h.typeText("/think off"); h.key("enter") }, "/prompt",
			afterReply + "<think>\n\n</think>\n\n", []string{"enable_thinking=false"}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		h.typeText(st.command)
		h.key("enter")
		if m.pane.Prompt == nil || m.pane.Prompt.Err != "" {
			t.Fatalf("%s: no prompt: %+v, status %+v", st.name, m.pane.Prompt, m.status)
		}
		if m.pane.Prompt.R.Text != st.wantText {
			t.Errorf("%s: prompt\n%q, want\n%q", st.name, m.pane.Prompt.R.Text, st.wantText)
		}
		if strings.Contains(m.pane.Prompt.R.Text, "Hmm") {
			t.Errorf("%s: the earlier reasoning is in the prompt", st.name)
		}
		view := m.View()
		for _, w := range st.onScreen {
			if !strings.Contains(view, w) {
				t.Errorf("%s: the pane lacks %q:\n%s", st.name, w, view)
			}
		}
		h.key("esc")
	}
	// The conversation itself gained no turn.
	if n := len(m.conv.Turns()); n != 2 {
		t.Errorf("%d turns after /prompt, want 2", n)
	}
}

// TestPromptErrorWraps: a template error is shown whole in the pane,
// wrapped at its width, not cut at the width of the status line.
func TestPromptErrorWraps(t *testing.T) {
	eng := &promptFailEngine{fakeEngine: newFakeEngine(), err: strings.Repeat("a long template error ", 12) + "END"}
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(80, 30)
	h.typeText("/prompt")
	h.key("enter")
	view := m.View()
	if !strings.Contains(view, "END") || !strings.Contains(view, "could not be rendered") {
		t.Errorf("the error is not shown whole:\n%s", view)
	}
	checkScreen(t, view, 80, 30)
}

type promptFailEngine struct {
	*fakeEngine
	err string
}

func (e *promptFailEngine) RenderPrompt(engine.Request) (engine.RenderedPrompt, error) {
	return engine.RenderedPrompt{}, errorString(e.err)
}

type errorString string

func (e errorString) Error() string { return string(e) }
