package picker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"vkchat/models/hub"
	"vkchat/models/store"
)

func TestMain(m *testing.M) {
	// The default renderer too, for anything not drawn through the test
	// renderer (and for teatest runs, whose output is a buffer anyway).
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// testRenderer draws without colour so screens compare as plain text.
func testRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

const testDir = "/home/ada/.cache/vkchat/models"

// sample is a store as store.ListDir would return it (sorted by name),
// with one file that is not a model.
func sample() []store.Model {
	return []store.Model{
		{Name: "Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m", Path: testDir + "/Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf", Arch: "qwen2", Params: 494032768, Quant: "Q4_K_M", Size: 397807936},
		{Name: "bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q8_0", Path: testDir + "/bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q8_0.gguf", Arch: "llama", Params: 134515008, Quant: "Q8_0", Size: 144811168},
		{Name: "broken", Path: testDir + "/broken.gguf", Size: 1234, Err: errors.New(`gguf: bad magic "\x00\x00\x00\x00" (not a GGUF file)`)},
		{Name: "stories260K", Path: testDir + "/stories260K.gguf", Arch: "llama", Params: 292352, Quant: "F32", Size: 1185376},
	}
}

func listOf(models []store.Model, err error) func() ([]store.Model, error) {
	return func() ([]store.Model, error) { return models, err }
}

// fakePull is a Pull that reports the given progress, then waits for
// release (or ctx) and returns path or err.
type fakePull struct {
	reports []hub.Progress
	release chan struct{} // nil: return at once
	path    string
	err     error
	calls   chan string // refs pulled
	ctxErr  chan error  // ctx.Err() when a pull ends
}

func newFakePull() *fakePull {
	return &fakePull{calls: make(chan string, 8), ctxErr: make(chan error, 8)}
}

func (f *fakePull) pull(ctx context.Context, ref string, progress func(hub.Progress)) (string, error) {
	f.calls <- ref
	defer func() { f.ctxErr <- ctx.Err() }()
	for _, p := range f.reports {
		progress(p)
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return f.path, f.err
}

var midway = hub.Progress{File: "SmolLM2-135M-Instruct-Q8_0.gguf", Done: 69 << 20, Total: 144811168, Rate: 12.3 * (1 << 20), ETA: 6 * time.Second}

func newTestModel(t *testing.T, opts Options) *Model {
	t.Helper()
	if opts.StoreDir == "" {
		opts.StoreDir = testDir
	}
	if opts.DefaultRef == "" {
		opts.DefaultRef = hub.DefaultModel
	}
	if opts.Pull == nil {
		opts.Pull = func(context.Context, string, func(hub.Progress)) (string, error) {
			t.Error("unexpected pull")
			return "", errors.New("unexpected pull")
		}
	}
	m := newModel(opts, testRenderer())
	t.Cleanup(func() {
		m.stopPull()
		m.waitPull(5 * time.Second)
	})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(m.Init()())
	return m
}

// press sends one key: a name bubbletea uses (enter, esc, up, ctrl+c) or
// runes.
func press(m *Model, k string) tea.Cmd {
	var msg tea.KeyMsg
	switch k {
	case "enter":
		msg = tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "up":
		msg = tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	case "pgdown":
		msg = tea.KeyMsg{Type: tea.KeyPgDown}
	case "end":
		msg = tea.KeyMsg{Type: tea.KeyEnd}
	case "ctrl+c":
		msg = tea.KeyMsg{Type: tea.KeyCtrlC}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	_, cmd := m.Update(msg)
	return cmd
}

// step runs a command that waits on the download and feeds its message
// back, as the program would.
func step(t *testing.T, m *Model, cmd tea.Cmd) tea.Msg {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to wait on the download")
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		m.Update(msg)
		return msg
	case <-time.After(5 * time.Second):
		t.Fatal("the download command did not answer")
	}
	return nil
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// checkScreen asserts the view fills the terminal exactly and draws no
// escape sequences under the Ascii profile.
func checkScreen(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d is %d cells wide (max %d): %q", i, lw, w, l)
		}
	}
	if strings.ContainsRune(view, '\x1b') {
		t.Error("escape byte in an Ascii-profile screen")
	}
}

func shot(t *testing.T, m *Model, name string) {
	t.Helper()
	view := m.View()
	checkScreen(t, view, m.width, m.height)
	t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(view)) })
}

// The screens under testdata/TestGoldens are regenerated with
//
//	go test ./ui/picker -run TestGoldens -update
func TestGoldens(t *testing.T) {
	m := newTestModel(t, Options{List: listOf(sample(), nil)})
	shot(t, m, "list")
	press(m, "down")
	press(m, "down") // over the unusable model
	shot(t, m, "list_last")

	m.Update(tea.WindowSizeMsg{Width: 56, Height: 12})
	shot(t, m, "list_narrow")

	fp := newFakePull()
	fp.reports = []hub.Progress{midway}
	fp.release = make(chan struct{})
	m = newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull})
	shot(t, m, "offer")
	step(t, m, press(m, "enter"))
	shot(t, m, "pulling")

	fp = newFakePull()
	fp.err = &hub.NetworkError{Host: "huggingface.co", Err: errors.New("dial tcp: lookup huggingface.co: no such host")}
	m = newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull})
	step(t, m, press(m, "enter"))
	shot(t, m, "offline")

	m = newTestModel(t, Options{List: listOf(sample()[2:3], nil)})
	shot(t, m, "all_unusable")
}

func TestListKeys(t *testing.T) {
	s := sample()
	m := newTestModel(t, Options{List: listOf(s, nil)})
	if m.screen != screenList || m.cursor != 0 {
		t.Fatalf("screen %d cursor %d, want the list at 0", m.screen, m.cursor)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"down", 1}, {"down", 3}, {"down", 3}, {"up", 1}, {"k", 0}, {"up", 0},
		{"G", 3}, {"g", 0}, {"j", 1}, {"end", 3}, {"pgdown", 3},
	} {
		press(m, tc.key)
		if m.cursor != tc.want {
			t.Fatalf("after %s: cursor %d, want %d", tc.key, m.cursor, tc.want)
		}
	}
	press(m, "up")
	if cmd := press(m, "enter"); !isQuit(cmd) {
		t.Fatal("enter did not quit")
	}
	if path, err := m.Result(); err != nil || path != s[1].Path {
		t.Errorf("Result = %q, %v; want %q", path, err, s[1].Path)
	}
}

func TestUnusableFirstIsSkipped(t *testing.T) {
	s := sample()[1:] // bartowski, broken, stories
	s[0], s[1] = s[1], s[0]
	m := newTestModel(t, Options{List: listOf(s, nil)})
	if m.cursor != 1 {
		t.Errorf("cursor %d, want 1 (the first usable model)", m.cursor)
	}
	press(m, "up")
	if m.cursor != 1 {
		t.Errorf("up onto an unusable model: cursor %d, want 1", m.cursor)
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "esc", "ctrl+c"} {
		for _, models := range [][]store.Model{sample(), nil} {
			m := newTestModel(t, Options{List: listOf(models, nil)})
			if cmd := press(m, k); !isQuit(cmd) {
				t.Errorf("%s with %d models: no quit", k, len(models))
			}
			if _, err := m.Result(); !errors.Is(err, ErrCanceled) {
				t.Errorf("%s with %d models: err %v, want ErrCanceled", k, len(models), err)
			}
		}
	}
	// Keys that do nothing on the list must not quit.
	m := newTestModel(t, Options{List: listOf(sample(), nil)})
	for _, k := range []string{"x", "?", "?", "z"} {
		if cmd := press(m, k); cmd != nil {
			t.Errorf("%s returned a command", k)
		}
	}
	if _, err := m.Result(); !errors.Is(err, ErrCanceled) || m.screen != screenList {
		t.Errorf("still on the list expected, screen %d", m.screen)
	}
}

func TestAllUnusable(t *testing.T) {
	fp := newFakePull()
	fp.path = "/m/new.gguf"
	m := newTestModel(t, Options{List: listOf(sample()[2:3], nil), Pull: fp.pull})
	if cmd := press(m, "enter"); cmd != nil {
		t.Fatal("enter on an unusable model did something")
	}
	if !strings.Contains(m.View(), "broken cannot be used: unusable: gguf: bad magic") {
		t.Errorf("no reason shown:\n%s", m.View())
	}
	step(t, m, press(m, "p"))
	if path, err := m.Result(); err != nil || path != "/m/new.gguf" {
		t.Errorf("Result = %q, %v", path, err)
	}
	if ref := <-fp.calls; ref != hub.DefaultModel {
		t.Errorf("pulled %q, want the default", ref)
	}
}

func TestStopDownload(t *testing.T) {
	for _, k := range []string{"esc", "q", "ctrl+c"} {
		fp := newFakePull()
		fp.reports = []hub.Progress{midway}
		fp.release = make(chan struct{})
		m := newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull})
		step(t, m, press(m, "enter"))
		if cmd := press(m, "x"); cmd != nil || m.screen != screenPulling {
			t.Fatalf("x interrupted the download")
		}
		if cmd := press(m, k); !isQuit(cmd) {
			t.Fatalf("%s did not quit", k)
		}
		if _, err := m.Result(); !errors.Is(err, ErrCanceled) {
			t.Errorf("%s: err %v", k, err)
		}
		select {
		case err := <-fp.ctxErr:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: pull ended with ctx err %v", k, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the pull was not canceled", k)
		}
	}
}

func TestFailedRetryAndExit(t *testing.T) {
	netErr := &hub.NetworkError{Host: "huggingface.co", Err: errors.New("connection refused")}
	fp := newFakePull()
	fp.err = netErr
	m := newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull, DefaultRef: "hf:org/Tiny-GGUF"})
	step(t, m, press(m, "enter"))
	if m.screen != screenFailed {
		t.Fatalf("screen %d, want failed", m.screen)
	}
	view := m.View()
	for _, want := range []string{"cannot reach huggingface.co", "vkchat chat --model FILE.gguf", "make run MODEL=path", "vkchat pull hf:OWNER/REPO[:QUANT]", "r retry"} {
		if !strings.Contains(view, want) {
			t.Errorf("failed screen lacks %q:\n%s", want, view)
		}
	}
	// r tries again; the second failure lands on the same screen.
	step(t, m, press(m, "r"))
	if len(fp.calls) != 2 || m.screen != screenFailed {
		t.Fatalf("retry: %d pulls, screen %d", len(fp.calls), m.screen)
	}
	// Any other key leaves, with the error for the caller to print.
	if cmd := press(m, "ctrl+c"); !isQuit(cmd) {
		t.Fatal("a key on the error screen did not quit")
	}
	_, err := m.Result()
	var pe *PullError
	if !errors.As(err, &pe) || !errors.Is(err, netErr) || pe.Ref != "hf:org/Tiny-GGUF" {
		t.Fatalf("err %v (%T), want a PullError wrapping the network error", err, err)
	}
	if !strings.Contains(err.Error(), "vkchat chat --model FILE.gguf") {
		t.Errorf("error does not say how to go on: %v", err)
	}
}

func TestStaleMessagesIgnored(t *testing.T) {
	fp := newFakePull()
	fp.release = make(chan struct{})
	m := newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull})
	press(m, "enter")
	m.Update(progressMsg{gen: m.gen - 1, p: midway})
	m.Update(pulledMsg{gen: m.gen - 1, path: "/old.gguf"})
	if m.screen != screenPulling || m.progSeen {
		t.Fatalf("an earlier attempt's messages changed the screen (screen %d)", m.screen)
	}
	m.Update(pulledMsg{gen: m.gen, path: "/new.gguf"})
	if path, err := m.Result(); err != nil || path != "/new.gguf" {
		t.Errorf("Result = %q, %v", path, err)
	}
}

func TestListError(t *testing.T) {
	m := newTestModel(t, Options{List: listOf(nil, errors.New("permission denied"))})
	if m.screen != screenOffer || !strings.Contains(m.View(), "Could not read the model store: permission denied") {
		t.Errorf("screen %d:\n%s", m.screen, m.View())
	}
}

// TestScrolling checks a store longer than the screen: the cursor stays
// visible and the screen keeps its size.
func TestScrolling(t *testing.T) {
	var models []store.Model
	for i := range 40 {
		models = append(models, store.Model{Name: fmt.Sprintf("model-%02d", i), Path: fmt.Sprintf("/m/%02d.gguf", i), Arch: "llama", Params: 1e6, Quant: "F16", Size: 2e6})
	}
	m := newTestModel(t, Options{List: listOf(models, nil)})
	rows := m.rows()
	for _, k := range []string{"pgdown", "pgdown", "down", "end", "g", "pgdown", "k"} {
		press(m, k)
		view := m.View()
		checkScreen(t, view, 80, 24)
		if !strings.Contains(view, "> "+models[m.cursor].Name) {
			t.Fatalf("after %s the cursor (%d) is off screen:\n%s", k, m.cursor, view)
		}
		if m.cursor < m.offset || m.cursor >= m.offset+rows {
			t.Fatalf("after %s: cursor %d outside [%d, %d)", k, m.cursor, m.offset, m.offset+rows)
		}
	}
	if !strings.Contains(m.View(), "40 models · showing") {
		t.Errorf("no position in the status line:\n%s", m.View())
	}
	// The full help takes rows from the list, not from the screen.
	press(m, "?")
	press(m, "G")
	if v := m.View(); !strings.Contains(v, "page down") || !strings.Contains(v, "> "+models[39].Name) {
		t.Errorf("full help:\n%s", v)
	}
	checkScreen(t, m.View(), 80, 24)
	// A tiny terminal still gets a whole screen.
	for _, sz := range [][2]int{{20, 8}, {30, 10}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkScreen(t, m.View(), sz[0], sz[1])
	}
}

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		p    hub.Progress
		want string
	}{
		{midway, "69.0 MiB of 138.1 MiB · 12.3 MiB/s · 0:06 left"},
		{hub.Progress{Done: 512, Total: -1}, "512 B"},
		{hub.Progress{Done: 3 << 30, Total: 8 << 30, Rate: 1 << 20, ETA: 5400 * time.Second}, "3.0 GiB of 8.0 GiB · 1.0 MiB/s · 1:30:00 left"},
	} {
		if got := progressLine(tc.p); got != tc.want {
			t.Errorf("progressLine(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestPullScreens(t *testing.T) {
	fp := newFakePull()
	fp.release = make(chan struct{})
	m := newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull})
	press(m, "enter")
	if v := m.View(); !strings.Contains(v, "Looking up the model") {
		t.Errorf("before the first report:\n%s", v)
	}
	m.Update(progressMsg{gen: m.gen, p: hub.Progress{File: "x.gguf", Done: 5 << 20, Total: -1, Rate: 1 << 20}})
	if v := m.View(); !strings.Contains(v, "5.0 MiB · 1.0 MiB/s") || strings.Contains(v, "░") {
		t.Errorf("unknown total:\n%s", v)
	}
	m.Update(progressMsg{gen: m.gen, p: hub.Progress{File: "x.gguf", Done: 100, Total: 100}})
	if v := m.View(); !strings.Contains(v, "100%") || !strings.Contains(v, "Checking the file") {
		t.Errorf("complete:\n%s", v)
	}
	checkScreen(t, m.View(), 80, 24)
}

func TestLatestKeepsNewest(t *testing.T) {
	ch := make(chan hub.Progress, 1)
	for i := range 5 {
		latest(ch, hub.Progress{Done: int64(i)})
	}
	if p := <-ch; p.Done != 4 {
		t.Errorf("got report %d, want the newest (4)", p.Done)
	}
}
