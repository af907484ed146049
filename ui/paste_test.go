package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/models/demo"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// pasteBound is how long a 1 MB paste may take to land and draw. A
// bracketed paste arrives as one KeyMsg; an input that re-wraps or
// re-renders the whole text per rune would take minutes here.
const pasteBound = 5 * time.Second

// bigPaste is n bytes of text as a paste brings it: lines of prose with
// tabs, multi-byte runes and newlines.
func bigPaste(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\tthe quick brown fox — jumps over the lazy dog ✓ 日本語\n")
	}
	return strings.ToValidUTF8(b.String()[:n], "")
}

// sameText compares ignoring spaces and tabs: an input may expand tabs.
func sameText(a, b string) bool {
	strip := strings.NewReplacer(" ", "", "\t", "")
	return strip.Replace(a) == strip.Replace(b)
}

// TestHugePaste: a 1 MB paste is either accepted whole or refused with a
// message on screen, and neither hangs the UI: the paste, a redraw, and a
// send (or the attempt) all finish within pasteBound. Silently keeping
// part of it counts as neither.
func TestHugePaste(t *testing.T) {
	paste := bigPaste(1 << 20)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			eng := newFakeEngine()
			m := newTestModel(t, eng, Config{})
			h := newHarness(t, m)
			h.size(size[0], size[1])

			within(t, "the paste and a redraw", func() {
				h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(paste), Paste: true})
				_ = m.View()
			})
			got := m.input.Value()
			switch {
			case sameText(got, paste):
				t.Logf("accepted: the input holds %d bytes for the %d pasted", len(got), len(paste))
			case m.status.text != "":
				t.Logf("refused or cut with a message: %q (input holds %d of %d bytes)", m.status.text, len(got), len(paste))
				return
			default:
				t.Fatalf("the input holds %d of the %d pasted bytes and the screen says nothing about the rest", len(got), len(paste))
			}
			// Sending it must not hang either: the engine gets it, or
			// the user is told why not.
			within(t, "sending the paste", func() {
				h.key("enter")
				_ = m.View()
			})
			if reqs := eng.requestCount(); reqs == 0 && m.status.text == "" {
				t.Error("enter on a 1 MB message neither sent it nor said why")
			}
			within(t, "the reply", func() {
				for m.gen != nil {
					h.send(<-h.msgs)
				}
				_ = m.View()
			})
		})
	}
}

// within runs f and fails the test if it takes longer than pasteBound.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		t.Logf("%s: %s", what, time.Since(start).Round(time.Millisecond))
	case <-time.After(pasteBound):
		t.Fatalf("%s took more than %s", what, pasteBound)
	}
}

// TestHugePasteRealEngine sends a huge paste to the demo model through
// the real engine (cpu), whose 320-token context cannot hold it: the
// engine must tokenize it and answer (a reply, or an error shown on
// screen) within the bound, and the conversation must still be saved.
func TestHugePasteRealEngine(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	path, err := demo.Path()
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Load(context.Background(), path, engine.Options{Backend: "cpu", ContextSize: 320, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 16})
	h := newHarness(t, m)
	h.size(120, 40)
	// The biggest paste the input takes goes to the engine: the whole
	// megabyte, or, where the input refuses that (with a message, as
	// TestHugePaste checks), 60 KiB, still far past the context.
	var paste string
	for _, n := range []int{1 << 20, 60 << 10} {
		paste = bigPaste(n)
		m.input.Reset()
		within(t, fmt.Sprintf("a %d KiB paste", n>>10), func() { h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(paste), Paste: true}) })
		if sameText(m.input.Value(), paste) {
			break
		}
		if m.status.text == "" {
			t.Fatalf("a %d-byte paste cut to %d bytes without a message", n, len(m.input.Value()))
		}
		t.Logf("%d KiB refused: %q", n>>10, m.status.text)
		paste = ""
	}
	if paste == "" {
		t.Fatal("the input took neither paste")
	}
	within(t, "sending it and the engine's answer", func() {
		h.key("enter")
		for m.gen != nil {
			h.send(<-h.msgs)
		}
		_ = m.View()
	})
	last := m.conv.Turns()[len(m.conv.Turns())-1]
	var notes []string
	for _, n := range last.Notes {
		notes = append(notes, n.Text)
	}
	t.Logf("last turn %s, %d bytes; status %q; notes %q", last.Role, len(last.Content), m.status.text, notes)
	if last.Role == "assistant" && last.Content == "" && len(notes) == 0 && m.status.text == "" {
		t.Error("the engine gave neither a reply nor a message")
	}
	if m.saver.Err() != nil {
		t.Errorf("autosave: %v", m.saver.Err())
	}
	c, err := conversation.Read(m.conv.Path(), sample.Params{})
	if err != nil || len(c.Messages) == 0 || !sameText(c.Messages[0].Content, paste) {
		t.Errorf("the pasted message is not saved whole (%v, %d messages)", err, len(c.Messages))
	}
}
