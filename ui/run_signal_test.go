package ui

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vkchat/runtime/sample"
)

// A signal (SIGTERM or Ctrl+C caught by the command, which cancels ctx)
// in the middle of a reply must end Run cleanly with the conversation on
// disk. Tokens already rendered are saved with it; tokens still in flight
// to the program when it was killed may not be.
func TestRunSavesOnSignalMidReply(t *testing.T) {
	eng := newFakeEngine()
	eng.holdAfter = 3
	dir := t.TempDir()
	in, typing := io.Pipe()
	defer typing.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, eng, Config{StateDir: dir, Input: in, Output: io.Discard}) }()
	if _, err := io.WriteString(typing, "hello there\r"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-eng.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the reply never started")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after a signal: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after the signal")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "conversations", "*.json"))
	if len(files) != 1 {
		t.Fatalf("saved files %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Messages) == 0 || saved.Messages[0].Content != "hello there" {
		t.Fatalf("saved messages %+v, want the prompt first", saved.Messages)
	}
	full := strings.Join(fakeReplyCode, "")
	for _, msg := range saved.Messages[1:] {
		if msg.Role != "assistant" || !strings.HasPrefix(full, msg.Content) {
			t.Errorf("saved reply %+v is not a prefix of the reply being generated", msg)
		}
	}
}

// panickyEngine panics in SetParams once armed: a bug inside Update.
type panickyEngine struct {
	*fakeEngine
	armed atomic.Bool
}

func (p *panickyEngine) SetParams(sp sample.Params) {
	if p.armed.Load() {
		panic("bug in a settings change")
	}
	p.fakeEngine.SetParams(sp)
}

// A panic inside the program: Run returns a one-line error (not a crash)
// that says the terminal was restored and where the conversation is, and
// the file holds it.
func TestRunSavesOnPanic(t *testing.T) {
	eng := &panickyEngine{fakeEngine: newFakeEngine()}
	dir := t.TempDir()
	in, typing := io.Pipe()
	defer typing.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), eng, Config{StateDir: dir, Input: in, Output: io.Discard})
	}()
	io.WriteString(typing, "keep this\r")
	deadline := time.Now().Add(10 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "conversations", "*.json"))
		if len(files) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first message was never saved")
		}
		time.Sleep(10 * time.Millisecond)
	}
	eng.armed.Store(true)
	go io.WriteString(typing, "/temp 0.5\r")
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after the panic")
	}
	if err == nil || !strings.Contains(err.Error(), "terminal was restored") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run after a panic: %q, want one line saying the terminal was restored", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "conversations", "*.json"))
	if len(files) != 1 || !strings.Contains(err.Error(), files[0]) {
		t.Fatalf("error %q does not name the saved file %v", err, files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"keep this"`) {
		t.Fatalf("saved file lacks the message:\n%s", data)
	}
}
