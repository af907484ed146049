package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
)

// lockedBuffer is a bytes.Buffer the program writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunTurnsAutowrapOff: the program runs with autowrap off, so a row a
// terminal draws wider than the layout measured is clipped instead of
// scrolling the screen, and the terminal gets autowrap back at the end.
func TestRunTurnsAutowrapOff(t *testing.T) {
	out := &lockedBuffer{}
	in, typing := io.Pipe()
	defer typing.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, newFakeEngine(), Config{StateDir: t.TempDir(), Input: in, Output: out})
	}()
	deadline := time.Now().Add(10 * time.Second)
	// Without a terminal there is no window size and nothing is drawn;
	// the program has started once it took the alternate screen.
	for !strings.Contains(out.String(), "\x1b[?1049h") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
	s := out.String()
	off, on := strings.Index(s, termtext.AutowrapOff), strings.LastIndex(s, termtext.AutowrapOn)
	if off != 0 || on < 0 || on < strings.LastIndex(s, "\x1b[?1049l") || !strings.HasSuffix(s, termtext.AutowrapOn) {
		t.Errorf("autowrap off at %d, back on at %d (after leaving the alternate screen, last): %q", off, on, s)
	}
}

// TestCtrlLRedraws: ctrl+l asks bubbletea to clear and redraw the screen.
func TestCtrlLRedraws(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	_, cmd := m.Update(keyMsg("ctrl+l"))
	if cmd == nil {
		t.Fatal("ctrl+l did nothing")
	}
	if got, want := fmt.Sprintf("%T", cmd()), fmt.Sprintf("%T", tea.ClearScreen()); got != want {
		t.Errorf("ctrl+l sent %s, want %s (tea.ClearScreen)", got, want)
	}
}
