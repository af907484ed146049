package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/models/demo"
	"vkchat/runtime/sample"
	"vkchat/ui"
	"vkchat/ui/picker"
)

func TestFirstRunChoice(t *testing.T) {
	cases := []struct {
		name       string
		stored     int
		reachable  bool
		pickResult string
		pickErr    error
		want       string
		wantErr    error
		wantPicker bool
	}{
		{name: "offline, empty store: the demo at once", stored: 0, reachable: false, want: demo.Ref},
		{name: "online, empty store: the download offer", stored: 0, reachable: true, pickResult: "/m/smol.gguf", want: "/m/smol.gguf", wantPicker: true},
		{name: "online, demo chosen in the offer", stored: 0, reachable: true, pickResult: demo.Ref, want: demo.Ref, wantPicker: true},
		{name: "stored models: the list, even offline", stored: 2, reachable: false, pickResult: "/m/a.gguf", want: "/m/a.gguf", wantPicker: true},
		{name: "picker left without a model", stored: 1, reachable: true, pickErr: picker.ErrCanceled, wantErr: picker.ErrCanceled, wantPicker: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			picked := false
			env := firstRunEnv{
				stored:    func() int { return c.stored },
				reachable: func(context.Context) bool { return c.reachable },
				pick: func(_ context.Context, opts picker.Options) (string, error) {
					picked = true
					if !opts.Demo {
						t.Error("the picker was not offered the demo model")
					}
					return c.pickResult, c.pickErr
				},
			}
			got, err := firstRun(context.Background(), env)
			if !errors.Is(err, c.wantErr) || got != c.want {
				t.Errorf("firstRun = %q, %v; want %q, %v", got, err, c.want, c.wantErr)
			}
			if picked != c.wantPicker {
				t.Errorf("picker shown: %v, want %v", picked, c.wantPicker)
			}
		})
	}
}

func TestHubReachable(t *testing.T) {
	t.Setenv("VKCHAT_OFFLINE", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.WriteHeader(http.StatusForbidden) // any answer means the network works
	}))
	defer srv.Close()
	if !hubReachable(context.Background(), srv.URL, time.Second) {
		t.Error("a server that answers 403 counts as unreachable")
	}

	closed := closedURL(t)
	start := time.Now()
	if hubReachable(context.Background(), closed, 2*time.Second) {
		t.Errorf("%s (nothing listening) counts as reachable", closed)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("the probe took %s, past its timeout", d)
	}

	// A server that never answers is given up on at the timeout.
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	start = time.Now()
	if hubReachable(context.Background(), slow.URL, 300*time.Millisecond) {
		t.Error("a server that never answers counts as reachable")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the probe of a silent server took %s (timeout 300ms)", d)
	}

	// The offline switches skip the probe altogether.
	before := hits
	for _, env := range []string{"VKCHAT_OFFLINE", "HF_HUB_OFFLINE"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "1")
			if hubReachable(context.Background(), srv.URL, time.Second) {
				t.Errorf("%s=1 but the hub counts as reachable", env)
			}
		})
	}
	if hits != before {
		t.Errorf("the offline switches still sent %d requests", hits-before)
	}
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestRunDemo: `vkchat run --model demo` generates from the embedded
// model with no file and no network.
func TestRunDemo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out, errb bytes.Buffer
	err := runRun(context.Background(), []string{"--model", "demo", "--prompt", "Once upon a time", "-n", "16", "--temp", "0"}, &out, &errb)
	if err != nil {
		t.Fatalf("run --model demo: %v\n%s", err, errb.String())
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Errorf("no text generated; stderr:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "decode: 16 tokens") && !strings.Contains(errb.String(), "stop:") {
		t.Errorf("no decode summary:\n%s", errb.String())
	}
}

// TestDemoNoticeFits: the demo's notice is shown whole, the command
// included, at the usual terminal widths (the status line cuts what does
// not fit with an ellipsis).
func TestDemoNoticeFits(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ef := engineFlags{model: demo.Ref, backend: "cpu", kvType: "f16", device: -1}
	s, err := ef.load(context.Background(), sample.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, w := range []int{80, 100, 120, 160, 200} {
		m := ui.New(s, ui.Config{Notice: demoNotice, StateDir: t.TempDir()})
		m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		if view := m.View(); !strings.Contains(view, demoNotice) {
			t.Errorf("at %d columns the notice is not shown whole:\n%s", w, view)
		}
	}
}

func TestSeedPerRun(t *testing.T) {
	cases := []struct {
		args []string
		want uint64
	}{
		{nil, 777},                                 // drawn
		{[]string{"--seed", "42"}, 42},             // given
		{[]string{"--seed", "14613015"}, 14613015}, // given, even the default
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("chat", flag.ContinueOnError)
		p := samplerFlags(fs, true)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		seedPerRun(fs, p, func() uint64 { return 777 })
		if p.Seed != tc.want {
			t.Errorf("%v: seed %d, want %d", tc.args, p.Seed, tc.want)
		}
	}
}
