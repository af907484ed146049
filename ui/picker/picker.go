// Package picker is the screen "vkchat chat" shows when it is started
// without --model: it lists the models in the local store so the user can
// pick one, and on a first run, with an empty store, offers to download a
// small default model, showing the download's progress and, when it fails
// (offline, a typo in a mirror), how to carry on with a local file instead.
//
// The tea.Model (New) is separate from Run so tests can drive Update and
// View directly, without a terminal.
package picker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"vkchat/models/hub"
	"vkchat/models/store"
	"vkchat/ui/termtext"
)

// ErrCanceled is returned by Run when the user leaves without choosing a
// model (q, Esc, Ctrl+C) or ctx ends. It is not a failure worth printing.
var ErrCanceled = errors.New("no model chosen")

// Options configures the picker. The zero value lists store.Dir() and
// offers hub.DefaultModel, downloaded with hub.Pull.
type Options struct {
	// StoreDir is the model store; "" means store.Dir().
	StoreDir string
	// DefaultRef is the model offered when the store is empty (and with p
	// from the list); "" means hub.DefaultModel.
	DefaultRef string
	// Pull downloads ref and returns its path, calling progress as bytes
	// arrive. nil means hub.Pull into StoreDir. It runs on its own
	// goroutine and must return soon after ctx is canceled.
	Pull func(ctx context.Context, ref string, progress func(hub.Progress)) (string, error)
	// List returns the models to show. nil means store.ListDir(StoreDir).
	List func() ([]store.Model, error)
	// Demo offers the model bundled in the binary (d on the first-run,
	// failed-download and list screens); choosing it returns demo.Ref.
	Demo bool
	// Input and Output replace the terminal (stdin, stdout), for tests.
	Input  io.Reader
	Output io.Writer
}

// PullError is what Run returns when a download failed and the user left
// the error screen. Its message repeats the way forward, because the
// full-screen explanation disappears with the alternate screen.
type PullError struct {
	Ref string
	Err error
}

func (e *PullError) Error() string {
	return fmt.Sprintf("download %s: %v\n(to chat with a model file you have: vkchat chat --model FILE.gguf; to download another: vkchat pull hf:OWNER/REPO[:QUANT])", e.Ref, e.Err)
}

func (e *PullError) Unwrap() error { return e.Err }

// pullStopTimeout bounds how long Run waits for a canceled download to
// return, so the .partial file is closed and unlocked before the caller
// goes on; hub.Pull honours cancellation well within it.
const pullStopTimeout = 5 * time.Second

// Run shows the picker full-screen and returns the path of the model the
// user chose or downloaded. Leaving without one returns an error wrapping
// ErrCanceled; leaving the screen of a failed download returns *PullError.
func Run(ctx context.Context, opts Options) (string, error) {
	m := New(opts).(*Model)
	m.ctx = ctx
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen()}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	out := io.Writer(os.Stdout)
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
		out = opts.Output
	}
	// As in the chat: autowrap off, so a row a terminal draws wider than
	// termtext measured is clipped instead of scrolling the screen.
	_, _ = io.WriteString(out, termtext.AutowrapOff)
	_, err := tea.NewProgram(m, popts...).Run()
	_, _ = io.WriteString(out, termtext.AutowrapOn)
	m.stopPull()
	m.waitPull(pullStopTimeout)
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return "", fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
		}
		return "", fmt.Errorf("model picker: %w", err)
	}
	return m.Result()
}

// New builds the picker; colours follow the terminal on opts.Output
// (stdout when nil).
func New(opts Options) tea.Model {
	var out io.Writer = os.Stdout
	if opts.Output != nil {
		out = opts.Output
	}
	r := lipgloss.NewRenderer(out)
	// Ask the terminal for its background now: once the program reads
	// input, the reply to that query would arrive as typed keys.
	r.HasDarkBackground()
	return newModel(opts, r)
}

// Embedded is the picker as a part of another program (the chat's
// /model): ctx bounds its downloads, and the caller watches Done instead
// of letting its tea.Quit end the program.
//
// Its screens are worded for a chat that goes on: leaving returns to the
// chat (q, esc and ctrl+c do not quit the program), and the ways on name
// /model, not the command line that started the chat.
func Embedded(ctx context.Context, opts Options) *Model {
	m := New(opts).(*Model)
	m.ctx = ctx
	m.embed()
	return m
}

func (m *Model) embed() {
	m.embedded = true
	back := "back to the chat"
	m.keys.Quit = key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", back))
	m.keys.ForceQuit.SetHelp("ctrl+c", back)
	m.keys.Exit.SetHelp("any other key", back)
}

// resolve fills in the defaults of opts.
func resolve(opts Options) Options {
	if opts.StoreDir == "" {
		opts.StoreDir = store.Dir()
	}
	if opts.DefaultRef == "" {
		opts.DefaultRef = hub.DefaultModel
	}
	dir := opts.StoreDir
	if opts.List == nil {
		opts.List = func() ([]store.Model, error) { return store.ListDir(dir) }
	}
	if opts.Pull == nil {
		opts.Pull = func(ctx context.Context, ref string, progress func(hub.Progress)) (string, error) {
			return hub.Pull(ctx, ref, hub.Options{Dir: dir, Progress: progress})
		}
	}
	return opts
}
