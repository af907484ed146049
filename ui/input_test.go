package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/input"
)

// In a resumed conversation with nothing sent yet, ↑ recalls its messages.
func TestInputHistoryFromAResumedChat(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.conv.Append(&conversation.Turn{Role: "user", Content: "first question"}, &conversation.Turn{Role: "assistant", Content: "an answer"},
		&conversation.Turn{Role: "user", Content: "second\nquestion"}, &conversation.Turn{Role: "assistant", Content: "another"})
	m.Update(keyMsg("up"))
	if got := m.input.Value(); got != "second\nquestion" {
		t.Fatalf("↑ recalled %q", got)
	}
	m.Update(keyMsg("up"))
	m.Update(keyMsg("up"))
	if got := m.input.Value(); got != "first question" {
		t.Fatalf("↑↑↑ recalled %q", got)
	}
	m.Update(keyMsg("down"))
	m.Update(keyMsg("down"))
	if got := m.input.Value(); got != "" {
		t.Errorf("↓ past the newest left %q", got)
	}
}

// Ctrl+V reads the clipboard and pastes it like a bracketed paste; where
// there is no clipboard (no display, no xclip) the status line says so.
func TestInputClipboardPaste(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlV})
	if cmd == nil {
		t.Fatal("ctrl+v gave no command")
	}
	switch msg := cmd().(type) {
	case tea.KeyMsg:
		if !msg.Paste {
			t.Fatalf("the clipboard came back as a key, not a paste: %v", msg)
		}
		m.Update(msg)
		if want := input.Clean(string(msg.Runes)); m.input.Value() != want && m.status.text == "" {
			t.Errorf("pasted %q, want %q", m.input.Value(), want)
		}
	case input.ClipboardErrMsg:
		m.Update(msg)
		if !m.status.err || !strings.Contains(m.status.text, "clipboard") {
			t.Errorf("status %+v after a failed clipboard read", m.status)
		}
	default:
		t.Fatalf("unexpected %T", msg)
	}
}
