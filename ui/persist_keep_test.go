package ui

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// checkKeptUnsaved: with the state dir failing, /clear, ctrl+n and /load
// leave the conversation (turns turns) on screen and in memory, the status
// names the real error (want), and the exit rescue file holds it.
func checkKeptUnsaved(t *testing.T, h *harness, m *Model, turns int, want string) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other.json")
	if err := conversation.Write(other, conversation.File{Version: 1, Messages: nil}); err != nil {
		t.Fatal(err)
	}
	for _, do := range []func(){
		func() { h.typeText("/clear"); h.key("enter") },
		func() { h.key("ctrl+n") },
		func() { h.typeText("/load " + other); h.key("enter") },
	} {
		do()
		if m.conv.Len() != turns || m.conv.Turns()[0].Content != "keep me" {
			t.Fatalf("conversation dropped: %d turns, want %d", m.conv.Len(), turns)
		}
		if !m.status.err || !strings.Contains(m.status.text, "not saved") || !strings.Contains(m.status.text, want) {
			t.Fatalf("status %q (err %v), want it to say the chat is not saved and why (%q)", m.status.text, m.status.err, want)
		}
	}
	m.saver.RescueDir = t.TempDir()
	m.shutdown()
	err := m.rescueUnsaved()
	files, _ := filepath.Glob(filepath.Join(m.saver.RescueDir, "vkchat-unsaved-*.json"))
	if err == nil || len(files) != 1 {
		t.Fatalf("rescue: %v, files %v", err, files)
	}
	raw, _ := os.ReadFile(files[0])
	c, rerr := conversation.Read(files[0], sample.Params{})
	if rerr != nil || len(c.Messages) != turns || strings.Contains(string(raw), `"messages": null`) {
		t.Fatalf("rescue file: %v, %d messages, want %d:\n%s", rerr, len(c.Messages), turns, raw)
	}
}

// A state dir that cannot be created (its parent is a file: refused even
// for root).
func TestUnsavedChatIsNotDroppedNotADir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(parent, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, newFakeEngine(), Config{StateDir: filepath.Join(parent, "state")})
	m.saver.FirstDelay = time.Hour
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("keep me")
	if !errors.Is(m.saver.Err(), syscall.ENOTDIR) {
		t.Fatalf("save error %v, want ENOTDIR", m.saver.Err())
	}
	checkKeptUnsaved(t, h, m, 2, "not a directory")

	// /save PATH is the way out: the chat moves there and /clear works.
	dest := filepath.Join(t.TempDir(), "moved.json")
	h.typeText("/save " + dest)
	h.key("enter")
	if m.saver.Err() != nil || m.conv.Path() != dest || !strings.Contains(m.status.text, "now kept there") {
		t.Fatalf("after /save elsewhere: err %v, path %q, status %q", m.saver.Err(), m.conv.Path(), m.status.text)
	}
	h.key("ctrl+n")
	if m.conv.Len() != 0 {
		t.Fatalf("ctrl+n after the chat was saved elsewhere left %d turns", m.conv.Len())
	}
	if c, err := conversation.Read(dest, sample.Params{}); err != nil || len(c.Messages) != 2 {
		t.Fatalf("moved file: %v %+v", err, c.Messages)
	}
}

// A state dir that turns read-only mid-chat (a tmpfs remounted ro; needs
// mount rights, skipped elsewhere).
func TestUnsavedChatIsNotDroppedReadOnly(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	m := newTestModel(t, newFakeEngine(), Config{StateDir: dir})
	m.saver.FirstDelay = time.Hour
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("keep me")
	if m.saver.Err() != nil || m.conv.Path() == "" {
		t.Fatalf("first save: %v", m.saver.Err())
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	h.say("and me")
	if !errors.Is(m.saver.Err(), syscall.EROFS) {
		t.Fatalf("save error %v, want EROFS", m.saver.Err())
	}
	checkKeptUnsaved(t, h, m, 4, "read-only file system")
}
