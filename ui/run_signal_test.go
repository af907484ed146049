package ui

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
