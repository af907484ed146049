package ui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/runtime/gguf"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// templateModel loads stories260K with tmpl as its chat template on the
// CPU backend.
func templateModel(t *testing.T, tmpl string) *engine.Session {
	t.Helper()
	f, err := gguf.Open(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // the spec's tensors point into its mapping
	spec := fromgguf.Spec(f)
	spec.Set("tokenizer.chat_template", tmpl)
	b, err := spec.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), path, engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if name := s.Info().TemplateName; name != "gguf" {
		t.Fatalf("the template was not taken (%s): %s", name, s.Info().TemplateNote)
	}
	return s
}

// send types a message and presses Enter.
func send(tm *teatest.TestModel, text string) {
	tm.Type(text)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
}

// waitScreen waits until the program has written want.
func waitScreen(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// A template that passes the load check and the first message but fails
// on the second leaves the chat running: the error is on screen, the
// conversation is kept (on screen and in its file), and the next message
// is answered once the conversation is short enough again (/new).
func TestTemplateFailingOnSecondMessageKeepsChat(t *testing.T) {
	const tmpl = `{% for m in messages %}{% if loop.index > 2 %}{{ raise_exception('no third message, please') }}{% endif %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`
	s := templateModel(t, tmpl)
	m := newTestModel(t, s, Config{MaxTokens: 4})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })

	send(tm, "Once upon a time")
	waitScreen(t, tm, "4-token limit")
	send(tm, "and then")
	waitScreen(t, tm, "✗ engine error")
	// Still running: a command goes through and changes the state.
	tm.Type("/temp 0.7")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, "temp 0.70")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)

	turns := final.conv.Turns()
	if len(turns) < 3 || turns[0].Content != "Once upon a time" || turns[2].Content != "and then" || turns[1].Content == "" {
		t.Fatalf("turns after the failure: %d, want the first exchange and the second message kept", len(turns))
	}
	shown := false
	for _, n := range turns[2].Notes {
		shown = shown || n.Kind == conversation.NoteError && strings.Contains(n.Text, "no third message, please")
	}
	if !shown {
		t.Errorf("the template's error is not under the message: %+v", turns[2].Notes)
	}
	c, err := conversation.Read(final.conv.Path(), final.smp.Params)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) < 3 || c.Messages[2].Content != "and then" {
		t.Errorf("saved %d messages, want the second message kept: %+v", len(c.Messages), c.Messages)
	}
}

// A template that runs away on the second message (far below any limit
// for seconds) stops when the user presses Esc, and the chat goes on;
// Ctrl+C in the middle of another such render stops it at once (the
// engine is idle), and a second Ctrl+C ends the program.
func TestHangingTemplateRenderStops(t *testing.T) {
	oldLimits, oldTimeout := chat.Limits, chat.RenderTimeout
	chat.Limits.MaxSteps = 1 << 50 // only a cancel can stop it
	chat.RenderTimeout = 10 * time.Minute
	t.Cleanup(func() { chat.Limits, chat.RenderTimeout = oldLimits, oldTimeout })
	const tmpl = `{% for m in messages %}{% if loop.index > 2 %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`
	s := templateModel(t, tmpl)
	m := newTestModel(t, s, Config{MaxTokens: 4})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })

	send(tm, "Once upon a time")
	waitScreen(t, tm, "4-token limit")
	send(tm, "and then")
	waitScreen(t, tm, "and then")
	time.Sleep(300 * time.Millisecond) // into the render
	if m.waitEngine(0) == nil {
		t.Fatal("the engine is idle: the render did not hang")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	if err := m.waitEngine(5 * time.Second); err != nil {
		t.Fatalf("Esc did not stop the render: %v", err)
	}

	send(tm, "once more")
	waitScreen(t, tm, "once more")
	time.Sleep(300 * time.Millisecond)
	if m.waitEngine(0) == nil {
		t.Fatal("the engine is idle: the second render did not hang")
	}
	// Ctrl+C during a reply stops the reply (as llama-cli and ollama do),
	// here a render that would never end; a second Ctrl+C quits.
	start := time.Now()
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	if err := m.waitEngine(5 * time.Second); err != nil {
		t.Fatalf("Ctrl+C left the render running: %v", err)
	}
	t.Logf("Ctrl+C to stopped: %v", time.Since(start))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	var texts []string
	for _, turn := range final.conv.Turns() {
		texts = append(texts, turn.Content)
	}
	if !slices.Contains(texts, "and then") || !slices.Contains(texts, "once more") {
		t.Errorf("turns %q, want both stopped messages kept", texts)
	}
}
