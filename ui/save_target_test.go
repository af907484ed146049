package ui

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// /save onto a named pipe (as JSON or as Markdown) is refused, saying what
// the file is, and the pipe stays a pipe: the write's temp file and rename
// used to replace it with a regular file, behind the back of whatever
// reads from it.
func TestSaveRefusesANonRegularTarget(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{StateDir: t.TempDir()})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("keep this")
	for _, name := range []string{"pipe", "pipe.md"} {
		fifo := filepath.Join(t.TempDir(), name)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		h.typeText("/save " + fifo)
		h.key("enter")
		if !m.status.err || !strings.Contains(m.status.text, fifo) || !strings.Contains(m.status.text, "named pipe") {
			t.Errorf("/save %s: status %+v, want an error naming the file as a named pipe", name, m.status)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("/save %s: the pipe is now %v (%v)", name, st.Mode(), err)
		}
		if len(m.conv.Turns()) != 2 {
			t.Fatalf("/save %s: %d turns left", name, len(m.conv.Turns()))
		}
	}
}
