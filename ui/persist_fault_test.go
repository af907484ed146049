package ui

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// faultyDisk is an injected save: it fails with ENOSPC while full is set,
// as a write on a full disk does, and writes for real otherwise.
type faultyDisk struct {
	mu     sync.Mutex
	full   bool
	writes int // attempts
	fails  int
}

func (d *faultyDisk) write(path string, c conversation.File) error {
	d.mu.Lock()
	d.writes++
	full := d.full
	if full {
		d.fails++
	}
	d.mu.Unlock()
	if full {
		return &fs.PathError{Op: "write", Path: path + ".tmp", Err: syscall.ENOSPC}
	}
	return conversation.Write(path, c)
}

func (d *faultyDisk) set(full bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.full = full
}

func (d *faultyDisk) counts() (writes, fails int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writes, d.fails
}

// Autosave on a full disk: the conversation stays in memory, the screen
// says it was not saved, the save is retried on a timer, and once space
// is back the file holds every turn, those made while the disk was full
// included.
func TestAutosaveFullDiskRetries(t *testing.T) {
	disk := &faultyDisk{full: true}
	m := newTestModel(t, newFakeEngine(), Config{})
	m.saver.Write = disk.write
	m.saver.FirstDelay = 20 * time.Millisecond
	h := newHarness(t, m)
	h.size(100, 30)

	h.say("first while full")
	if m.saver.Err() == nil || !errors.Is(m.saver.Err(), syscall.ENOSPC) {
		t.Fatalf("saveErr = %v, want ENOSPC", m.saver.Err())
	}
	if len(m.conv.Turns()) != 2 || m.conv.Turns()[0].Content != "first while full" || m.conv.Turns()[1].Content == "" {
		t.Fatalf("conversation not kept in memory: %+v", m.conv.Turns())
	}
	view := m.View()
	for _, want := range []string{"could not save", "kept in memory"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q while the disk is full:\n%s", want, view)
		}
	}
	// The timer retries on its own, more than once, and backs off.
	h.waitFor("two timed retries", func() bool { _, f := disk.counts(); return f >= 3 })
	if m.saver.Delay() <= 20*time.Millisecond {
		t.Errorf("retry delay %s did not back off", m.saver.Delay())
	}
	// The chat goes on while saves fail.
	h.say("second while full")
	if len(m.conv.Turns()) != 4 {
		t.Fatalf("%d turns after the second message, want 4", len(m.conv.Turns()))
	}

	disk.set(false)
	h.waitFor("a retry to succeed", func() bool { return m.saver.Err() == nil })
	if !strings.Contains(m.status.text, "saved to") || m.status.err {
		t.Errorf("status after recovery %q (err %v), want a saved notice", m.status.text, m.status.err)
	}
	c, err := conversation.Read(m.conv.Path(), sample.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 4 || c.Messages[0].Content != "first while full" || c.Messages[2].Content != "second while full" ||
		c.Messages[3].Content != m.conv.Turns()[3].Content {
		t.Fatalf("saved conversation incomplete: %+v", c.Messages)
	}
	// No timer keeps running once saves succeed.
	writes, _ := disk.counts()
	time.Sleep(150 * time.Millisecond)
	drain(h)
	if w, _ := disk.counts(); w != writes {
		t.Errorf("%d more writes after recovery with nothing new to save", w-writes)
	}
}

// drain delivers the messages already queued, without waiting for more.
func drain(h *harness) {
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		default:
			return
		}
	}
}

// A state dir that cannot be created (its parent is a file: the OS
// refuses, even for root) is a real fault, not an injected one.
func TestAutosaveUnwritableStateDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(parent, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, newFakeEngine(), Config{StateDir: filepath.Join(parent, "state")})
	m.saver.FirstDelay = time.Hour // only the turn's own save here
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	if m.saver.Err() == nil || !errors.Is(m.saver.Err(), syscall.ENOTDIR) {
		t.Fatalf("saveErr = %v, want ENOTDIR", m.saver.Err())
	}
	if !strings.Contains(m.View(), "kept in memory") {
		t.Errorf("screen does not say the conversation is kept:\n%s", m.View())
	}
	if len(m.conv.Turns()) != 2 {
		t.Errorf("%d turns in memory, want 2", len(m.conv.Turns()))
	}
}

// When the chat ends with the last save failed, Run's final step puts the
// conversation somewhere else and says where; with nowhere to write, it
// prints the JSON.
func TestRescueUnsaved(t *testing.T) {
	disk := &faultyDisk{full: true}
	m := newTestModel(t, newFakeEngine(), Config{})
	m.saver.Write = func(path string, c conversation.File) error {
		if strings.Contains(path, "vkchat-unsaved-") {
			return conversation.Write(path, c)
		}
		return disk.write(path, c)
	}
	m.saver.FirstDelay = time.Hour
	m.saver.RescueDir = t.TempDir()
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("do not lose me")
	m.shutdown()
	err := m.rescueUnsaved()
	if err == nil || !strings.Contains(err.Error(), "instead") {
		t.Fatalf("rescueUnsaved = %v, want it to name where the conversation went", err)
	}
	files, _ := filepath.Glob(filepath.Join(m.saver.RescueDir, "vkchat-unsaved-*.json"))
	if len(files) != 1 || !strings.Contains(err.Error(), files[0]) {
		t.Fatalf("rescue files %v; error %v", files, err)
	}
	c, rerr := conversation.Read(files[0], sample.Params{})
	if rerr != nil || len(c.Messages) != 2 || c.Messages[0].Content != "do not lose me" {
		t.Fatalf("rescued file: %v, %+v", rerr, c.Messages)
	}

	// Nowhere to write at all: the JSON goes to the rescue output.
	var out bytes.Buffer
	m.saver.Write = disk.write
	m.saver.RescueOut = &out
	err = m.rescueUnsaved()
	if err == nil || !strings.Contains(err.Error(), "printed above as JSON") {
		t.Fatalf("rescueUnsaved = %v", err)
	}
	if !strings.Contains(out.String(), `"do not lose me"`) {
		t.Errorf("printed rescue lacks the message:\n%s", out.String())
	}
}

// A real full disk: a 64 KiB tmpfs, filled up. Needs mount rights (root
// in a container that allows it); skipped elsewhere, the injected fault
// above covers the same path.
func TestAutosaveRealFullTmpfs(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	// Fill it.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
			break
		}
	}
	f.Close()

	m := newTestModel(t, newFakeEngine(), Config{StateDir: dir})
	m.saver.FirstDelay = 20 * time.Millisecond
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("written to a full disk")
	if !errors.Is(m.saver.Err(), syscall.ENOSPC) {
		t.Fatalf("saveErr = %v, want ENOSPC from the full tmpfs", m.saver.Err())
	}
	if !strings.Contains(m.View(), "kept in memory") {
		t.Errorf("screen does not say the conversation is kept:\n%s", m.View())
	}
	// Nothing half-written is left on the full disk.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "conversations", ".*.tmp")); len(tmps) != 0 {
		t.Errorf("temporary files left behind: %v", tmps)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the retry after space came back", func() bool { return m.saver.Err() == nil })
	c, err := conversation.Read(m.conv.Path(), sample.Params{})
	if err != nil || len(c.Messages) != 2 || c.Messages[0].Content != "written to a full disk" {
		t.Fatalf("saved after recovery: %v, %+v", err, c.Messages)
	}
}
