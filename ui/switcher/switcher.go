// Package switcher is what the chat runs on, changed from inside it:
// /model loads another model (a file, demo, a name in the store, or one
// chosen in the model picker, ui/picker, opened over the chat), /backend
// moves the session to another compute backend and /spec switches its
// speculative decoding. It owns these
// commands and the open picker; the root swaps the engine once a model
// has loaded (it owns the engine), through a Host.
package switcher

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/command"
	"vkchat/ui/picker"
	"vkchat/ui/termtext"
)

// Host is what switching needs of the chat.
type Host interface {
	command.Reporter
	Busy() bool       // a reply is being written or winding down
	Generating() bool // a reply is being written
	Context() context.Context
	Size() (w, h int)
	ModelName() string
	// Open is the command that loads ref off the UI's goroutine.
	Open(ref string) tea.Cmd
	// Backend is the engine's backend switch, nil when it has none; it
	// says where the session runs now.
	Backend() func(name string) (where string, err error)
	// KVType is the KV cache's type ("f16", "q8_0", "q8_0/f16": keys/values).
	KVType() string
	// Speculator is the engine's speculative decoding, nil when it has
	// none (/spec).
	Speculator() Speculator
}

// Speculator is an engine whose speculative decoding can be switched
// (*engine.Session).
type Speculator interface {
	Spec() engine.SpecOptions
	SetSpec(engine.SpecOptions) error
}

// Switcher holds the picker /model opened and the model being loaded.
type Switcher struct {
	Picker  *picker.Model // open over the chat; nil when closed
	Loading string        // the model /model is loading, safe to print
	opts    picker.Options
	canOpen bool
	h       Host
}

// New switches with the picker's options; canOpen is false for a chat
// that cannot change models.
func New(opts picker.Options, canOpen bool, h Host) *Switcher {
	return &Switcher{opts: opts, canOpen: canOpen, h: h}
}

// Commands are /model and /spec (what the engine drafts with), and
// /backend and /kv, which says what the cache is kept in.
func (s *Switcher) Commands() (model, backend []command.Command) {
	return []command.Command{{Name: "model", ArgHelp: "[FILE]", Arg: command.Text,
			Help: "switch to another model, keeping the conversation (its template renders it from the next reply); without FILE pick from the stored models",
			Run:  func(a command.Args) tea.Cmd { return s.model(a.Text) }},
			{Name: "spec", ArgHelp: "[MODE] [N]", Arg: command.Text,
				Help: "speculative decoding: off, ngram, draft or mtp; N drafts at most",
				Run:  func(a command.Args) tea.Cmd { s.spec(a.Text); return nil }}},
		[]command.Command{{Name: "backend", ArgHelp: "NAME", Arg: command.TextRequired,
			Help: "continue on another compute backend (cpu or vulkan), e.g. after a GPU fault",
			Run:  func(a command.Args) tea.Cmd { s.backend(a.Text); return nil }},
			{Name: "kv", Help: "the KV cache's type (f16, f32, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl); set when the model loads (--kv-type)",
				Run: func(command.Args) tea.Cmd { s.kv(); return nil }}}
}

// spec is /spec [MODE] [N]: the draft source and the most tokens a round
// drafts; the draft model stays the one --draft named.
func (s *Switcher) spec(arg string) {
	sp := s.h.Speculator()
	if sp == nil {
		s.h.Error("this engine has no speculative decoding")
		return
	}
	cur := sp.Spec()
	f := strings.Fields(strings.ToLower(arg))
	if len(f) == 0 {
		s.h.Info("speculative decoding: " + specText(cur) + " · /spec off|ngram|draft|mtp [N]")
		return
	}
	if s.h.Generating() {
		s.h.Error("stop the reply first (esc), then change speculative decoding")
		return
	}
	m, err := engine.ParseSpecMode(f[0])
	if err != nil || len(f) > 2 {
		s.h.Error("/spec off|ngram|draft|mtp [N]: " + termtext.Sanitize(fmt.Sprint(err)))
		return
	}
	next := engine.SpecOptions{Mode: m, Max: cur.Max, Draft: cur.Draft}
	if len(f) == 2 {
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			s.h.Error(fmt.Sprintf("/spec %s N: N is the most tokens a round drafts, 0 (automatic) or more, not %q", m, termtext.Sanitize(f[1])))
			return
		}
		next.Max = n
	}
	if err := sp.SetSpec(next); err != nil {
		s.h.Error(termtext.Sanitize(err.Error()))
		return
	}
	s.h.Info("speculative decoding: " + specText(sp.Spec()) + " (from the next reply)")
}

// specText says what speculative decoding is in use.
func specText(o engine.SpecOptions) string {
	if o.Mode == "" || o.Mode == engine.SpecOff {
		return "off"
	}
	n := "automatic length, at most " + strconv.Itoa(engine.DefaultSpecMax)
	if o.Max > 0 {
		n = "at most " + strconv.Itoa(o.Max)
	}
	what := string(o.Mode) + " (" + n + " tokens a round)"
	if o.Mode == engine.SpecDraft {
		what += ", draft model " + termtext.Sanitize(o.Draft)
	}
	return what
}

// kv is /kv: the cache's type, and why it is not changed here — a cache
// of another type must be filled again from the whole context.
func (s *Switcher) kv() {
	t := termtext.Sanitize(s.h.KVType())
	what := "keys and values in " + t
	if k, v, pair := strings.Cut(t, "/"); pair {
		what = "keys in " + k + ", values in " + v
	}
	s.h.Info("KV cache: " + what + " · chosen when the model loads (--kv-type, --kv-type-k, --kv-type-v): another type would read the whole context again, so the chat does not change it")
}

// model is /model [REF]: with REF the model loads at once, without it the
// model picker opens over the chat. The conversation stays; the next
// reply renders it with the new model's template.
func (s *Switcher) model(ref string) tea.Cmd {
	switch {
	case !s.canOpen:
		s.h.Error("this chat cannot change models")
		return nil
	case s.h.Busy():
		s.h.Error("stop the reply first (esc), then /model")
		return nil
	case s.Loading != "":
		s.h.Error("still loading " + s.Loading)
		return nil
	}
	if ref = strings.TrimSpace(ref); ref != "" {
		return s.load(ref)
	}
	s.Picker = picker.Embedded(s.h.Context(), s.opts)
	w, h := s.h.Size()
	_, cmd := s.Picker.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return tea.Batch(cmd, s.Picker.Init())
}

// Update hands a message to the open picker; once it is done its quit
// command is dropped (it would end the chat) and its choice loads.
func (s *Switcher) Update(msg tea.Msg) tea.Cmd {
	_, cmd := s.Picker.Update(msg)
	if !s.Picker.Done() {
		return cmd
	}
	path, err := s.Picker.Result()
	s.Picker = nil
	switch {
	case errors.Is(err, picker.ErrCanceled):
		s.h.Info("still chatting with " + s.h.ModelName())
		return nil
	case err != nil:
		s.h.Error(termtext.Sanitize(err.Error()))
		return nil
	}
	return s.load(path)
}

// load loads ref off the UI's goroutine.
func (s *Switcher) load(ref string) tea.Cmd {
	s.Loading = termtext.Sanitize(ref)
	s.h.Info("loading " + s.Loading + "…")
	return s.h.Open(ref)
}

// backend is /backend NAME: the session moves to another backend; the
// conversation stays, and the next reply recomputes its prompt there.
func (s *Switcher) backend(name string) {
	sw := s.h.Backend()
	switch {
	case sw == nil:
		s.h.Error("this engine cannot change backends")
	case s.h.Generating():
		s.h.Error("stop the reply first (esc), then switch backends")
	default:
		where, err := sw(strings.ToLower(strings.TrimSpace(name)))
		if err != nil {
			s.h.Error(termtext.Sanitize(err.Error()))
			return
		}
		s.h.Info("now running on " + where)
	}
}
