package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOfflineFirstRunOpensDemo is the new user's first run without
// network: the built binary, in a terminal (util-linux script(1) provides
// the pty), with an empty model store and a Hub nothing answers on. The
// chat must open on the demo model with no key pressed, show the notice,
// and stream a reply to the first message within seconds.
func TestOfflineFirstRunOpensDemo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("script(1) with -c and -e is util-linux's")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not found: cannot give the chat a terminal")
	}
	bin := buildVkchat(t)
	home := t.TempDir()
	state := filepath.Join(home, "state")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qfec", "stty cols 100 rows 30; exec "+bin+" chat --backend cpu -n 24", "/dev/null")
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"HF_ENDPOINT="+closedURL(t), // nothing listens: offline
		"VKCHAT_MODELS="+filepath.Join(home, "models"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_STATE_HOME="+state,
		"VKCHAT_OFFLINE=", "HF_HUB_OFFLINE=",
		"TERM=xterm-256color",
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	// Answer the terminal queries (background colour, cursor position) as
	// a real terminal would; unanswered, each costs termenv a 5 s timeout.
	var inMu sync.Mutex
	write := func(s string) {
		inMu.Lock()
		defer inMu.Unlock()
		io.WriteString(stdin, s)
	}
	stopAnswer := make(chan struct{})
	defer close(stopAnswer)
	go func() {
		answered := 0
		for {
			select {
			case <-stopAnswer:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n := strings.Count(out.String(), "\x1b]11;?"); n > answered {
				answered = n
				write("\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[1;1R")
			}
		}
	}()

	const openBound = 10 * time.Second
	opened := waitFor(t, openBound, func() bool { return strings.Contains(out.String(), "demo model") })
	if !opened {
		t.Fatalf("the chat did not open on the demo model within %s; output:\n%s", openBound, tail(out.String()))
	}
	t.Logf("chat open on the demo model %.1fs after start", time.Since(start).Seconds())
	write("Once upon a time")
	time.Sleep(200 * time.Millisecond) // let the runes land before Enter
	write("\r")
	sent := time.Now()

	// Autosave runs after every turn; the reply is complete in the file
	// once the assistant message is there with text.
	var reply string
	ok := waitFor(t, 30*time.Second, func() bool {
		reply = savedReply(state)
		return reply != ""
	})
	if !ok {
		t.Fatalf("no reply saved within 30s of sending; output:\n%s", tail(out.String()))
	}
	t.Logf("reply of %d bytes saved %.1fs after sending: %q", len(reply), time.Since(sent).Seconds(), reply)
	write("\x03") // ctrl+c
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("vkchat chat exited with %v; output:\n%s", err, tail(out.String()))
		}
	case <-time.After(15 * time.Second):
		t.Errorf("vkchat chat did not exit within 15s of ctrl+c")
	}
	if strings.Contains(out.String(), "first run") {
		t.Error("the download offer was shown although the Hub was unreachable")
	}
}

// savedReply is the first assistant message saved under state, or "".
func savedReply(state string) string {
	files, _ := filepath.Glob(filepath.Join(state, "vkchat", "conversations", "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var c struct {
			Messages []struct{ Role, Content string }
		}
		if json.Unmarshal(data, &c) != nil {
			continue
		}
		for _, m := range c.Messages {
			if m.Role == "assistant" && strings.TrimSpace(m.Content) != "" {
				return m.Content
			}
		}
	}
	return ""
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
