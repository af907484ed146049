package ui

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"vkchat/ui/internal/uitest"
	"vkchat/ui/termtext"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// testRenderer draws without colour so screens compare as plain text.
func testRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

var testClock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestModel(t *testing.T, eng Engine, cfg Config) *Model {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	m := newModel(eng, cfg, testRenderer())
	m.now = func() time.Time { return testClock }
	m.tr.SetClock(nil) // every token drawn, whatever the machine's speed
	seed := uint64(1000)
	m.newSeed = func() uint64 { seed++; return seed }
	// No test writes to the real terminal or clipboard.
	m.copy = func(string) (string, error) { return "", errors.New("no clipboard in tests") }
	return m
}

// harness is a minimal bubbletea loop for tests: Update runs only on the
// test goroutine, commands run in goroutines and their messages queue up,
// and waitFor processes them until a condition holds.
type harness struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
	done chan struct{}
	quit bool
}

func newHarness(t *testing.T, m *Model) *harness {
	h := &harness{t: t, m: m, msgs: make(chan tea.Msg, 1024), done: make(chan struct{})}
	t.Cleanup(func() {
		m.shutdown()
		close(h.done)
		if err := m.waitEngine(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return h
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.deliver(cmd()) }()
}

func (h *harness) deliver(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
		return
	}
	select {
	case h.msgs <- msg:
	case <-h.done:
	}
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	if _, ok := msg.(tea.QuitMsg); ok {
		h.quit = true
		return
	}
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s\nscreen:\n%s", what, h.m.View())
		}
	}
}

// idle waits until no generation is running.
func (h *harness) idle() {
	h.t.Helper()
	h.waitFor("the generation to end", func() bool { return h.m.gen == nil })
}

func (h *harness) size(w, hgt int) { h.send(tea.WindowSizeMsg{Width: w, Height: hgt}) }

func (h *harness) key(names ...string) {
	h.t.Helper()
	for _, n := range names {
		h.send(keyMsg(n))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		if r == ' ' {
			h.send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
			continue
		}
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// say types a message, sends it and waits for the whole reply.
func (h *harness) say(s string) {
	h.t.Helper()
	h.typeText(s)
	h.key("enter")
	h.idle()
}

// keyMsg is uitest.KeyMsg.
func keyMsg(name string) tea.KeyMsg { return uitest.KeyMsg(name) }

// checkScreen asserts View's shape: exactly h rows, none wider than w.
func checkScreen(t *testing.T, view string, w, h int) {
	t.Helper()
	if w <= 0 || h <= 0 {
		if view != "" {
			t.Fatalf("%dx%d: want an empty view, got %q", w, h, view)
		}
		return
	}
	rows := strings.Split(view, "\n")
	if len(rows) != h {
		t.Fatalf("%dx%d: %d rows", w, h, len(rows))
	}
	for i, r := range rows {
		if termtext.Width(r) > w {
			t.Fatalf("%dx%d: row %d is %d cells wide: %q", w, h, i, termtext.Width(r), r)
		}
	}
}

// heatOn and bySurprisal are the heatmap's settings.
func heatOn(m *Model) bool      { on, _ := m.insp.Heat(); return on }
func bySurprisal(m *Model) bool { _, by := m.insp.Heat(); return by }
