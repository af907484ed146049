package picker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/models/hub"
	"vkchat/models/hub/hubtest"
	"vkchat/models/store"
)

func contains(s string) func([]byte) bool {
	return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
}

// TestTeatestPull drives the program through bubbletea: the empty-store
// offer, Enter, a progress report on screen, then the path Pull returned.
func TestTeatestPull(t *testing.T) {
	fp := newFakePull()
	fp.reports = []hub.Progress{{File: "Tiny-Q8_0.gguf", Done: 512 << 10, Total: 1 << 20, Rate: 256 << 10, ETA: 2 * time.Second}}
	fp.release = make(chan struct{})
	fp.path = "/models/org/Tiny-GGUF/Tiny-Q8_0.gguf"
	m := newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull, DefaultRef: "hf:org/Tiny-GGUF:Q8_0"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	wait := teatest.WithDuration(5 * time.Second)
	teatest.WaitFor(t, tm.Output(), contains("Press Enter to download it now."), wait)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), contains("512.0 KiB of 1.0 MiB"), wait)
	if ref := <-fp.calls; ref != "hf:org/Tiny-GGUF:Q8_0" {
		t.Errorf("pulled %q", ref)
	}
	close(fp.release)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if path, err := final.Result(); err != nil || path != fp.path {
		t.Errorf("Result = %q, %v; want %q", path, err, fp.path)
	}
}

// syncBuffer is an Output the test can read while the program writes.
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

// session runs Run with a pipe for a keyboard. type waits for text on the
// screen, then sends keys.
type session struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *syncBuffer
	done chan struct{}
	path string
	err  error
}

func start(t *testing.T, ctx context.Context, opts Options) *session {
	t.Helper()
	pr, pw := io.Pipe()
	s := &session{t: t, in: pw, out: &syncBuffer{}, done: make(chan struct{})}
	opts.Input, opts.Output = pr, s.out
	go func() {
		defer close(s.done)
		s.path, s.err = Run(ctx, opts)
		pr.Close()
	}()
	t.Cleanup(func() {
		pw.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return s
}

func (s *session) waitFor(text string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.out.String(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("%q never appeared; output:\n%s", text, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *session) keys(k string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, k); err != nil {
		s.t.Fatalf("type %q: %v", k, err)
	}
}

func (s *session) result() (string, error) {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatal("Run did not return")
	}
	return s.path, s.err
}

// TestRunReturnsPulledPath is Run itself, with a fake Pull that reports
// progress and returns a path.
func TestRunReturnsPulledPath(t *testing.T) {
	fp := newFakePull()
	fp.reports = []hub.Progress{midway}
	fp.release = make(chan struct{})
	fp.path = "/models/x.gguf"
	s := start(t, context.Background(), Options{StoreDir: testDir, List: listOf(nil, nil), Pull: fp.pull})
	s.waitFor("Press Enter")
	s.keys("\r")
	s.waitFor("69.0 MiB of 138.1 MiB")
	close(fp.release)
	if path, err := s.result(); err != nil || path != fp.path {
		t.Errorf("Run = %q, %v; want %q", path, err, fp.path)
	}
}

func TestRunCanceled(t *testing.T) {
	s := start(t, context.Background(), Options{StoreDir: testDir, List: listOf(sample(), nil)})
	s.waitFor("stories260K")
	s.keys("q")
	if _, err := s.result(); !errors.Is(err, ErrCanceled) {
		t.Errorf("q: err %v, want ErrCanceled", err)
	}

	// A canceled ctx (a signal) ends a download in progress too.
	fp := newFakePull()
	fp.release = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	s = start(t, ctx, Options{StoreDir: testDir, List: listOf(nil, nil), Pull: fp.pull})
	s.waitFor("Press Enter")
	s.keys("\r")
	s.waitFor("Looking up the model")
	cancel()
	if _, err := s.result(); !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled ctx: err %v", err)
	}
	select {
	case err := <-fp.ctxErr:
		if err == nil {
			t.Error("the pull's ctx was not canceled")
		}
	default:
		t.Error("Run returned before the pull did")
	}
}

// TestRunFakeHub pulls the default model from hubtest's fake Hub into an
// empty store, then picks it from the list on the next start.
func TestRunFakeHub(t *testing.T) {
	srv := hubtest.NewServer(t)
	src := hubtest.GGUF(t, 256, 256, map[string]any{"general.file_type": uint32(7)})
	srv.AddRepo("org/Tiny-GGUF", hubtest.File{Path: "Tiny-Q8_0.gguf", Data: src})
	t.Setenv("HF_ENDPOINT", srv.URL)
	dir := t.TempDir()
	opts := Options{StoreDir: dir, DefaultRef: "hf:org/Tiny-GGUF:Q8_0"}

	s := start(t, context.Background(), opts)
	s.waitFor("No models in")
	s.keys("\r")
	path, err := s.result()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "org", "Tiny-GGUF", "Tiny-Q8_0.gguf"); path != want {
		t.Errorf("path %q, want %q", path, want)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("the pulled file differs from the served one: %v", err)
	}

	s = start(t, context.Background(), opts)
	s.waitFor("org/Tiny-GGUF/Tiny-Q8_0")
	s.keys("\r")
	if again, err := s.result(); err != nil || again != path {
		t.Errorf("picked %q, %v; want %q", again, err, path)
	}
	if models, err := store.ListDir(dir); err != nil || len(models) != 1 || models[0].Quant != "Q8_0" {
		t.Errorf("store after the pull: %+v, %v", models, err)
	}
}

// TestRunOffline points the Hub at a closed port: the error screen stays
// until a key, and Run returns the network error for the caller to print.
func TestRunOffline(t *testing.T) {
	srv := hubtest.NewServer(t)
	srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	s := start(t, context.Background(), Options{StoreDir: t.TempDir(), DefaultRef: "hf:org/Tiny-GGUF:Q8_0"})
	s.waitFor("Press Enter")
	s.keys("\r")
	s.waitFor("cannot reach")
	s.waitFor("vkchat chat --model FILE.gguf")
	select {
	case <-s.done:
		t.Fatal("Run returned before a key was pressed")
	case <-time.After(100 * time.Millisecond):
	}
	s.keys("x")
	_, err := s.result()
	var ne *hub.NetworkError
	var pe *PullError
	if !errors.As(err, &pe) || !errors.As(err, &ne) {
		t.Fatalf("err %v (%T), want a PullError with a NetworkError", err, err)
	}
}
