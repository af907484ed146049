package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/ui/conversation"
)

// TestProgramEndToEnd runs the real bubbletea program: type a prompt, wait
// for the streamed reply on the terminal, quit.
func TestProgramEndToEnd(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 36))
	t.Cleanup(func() { _ = tm.Quit() })

	tm.Type("Write a tiny Go program")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Write a tiny Go program")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("It prints hi.")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	// While it runs, the sampler keys work through the real key path.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'T'}, Alt: true})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("temp 0.90")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})

	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if len(final.conv.Turns()) != 2 || final.conv.Turns()[1].Content != strings.Join(fakeReplyCode, "") {
		t.Fatalf("final turns %+v", final.conv.Turns())
	}
	if final.smp.Params.Temperature != 0.9 || eng.Params().Temperature != 0.9 {
		t.Errorf("temperature %v / engine %v", final.smp.Params.Temperature, eng.Params().Temperature)
	}
	if c, err := conversation.Read(final.conv.Path(), final.smp.Params); err != nil || len(c.Messages) != 2 {
		t.Fatalf("not saved on quit: %v", err)
	}
}
