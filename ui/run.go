package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

// engineStopTimeout is how long Run waits for a canceled Generate to
// return before giving up on it.
const engineStopTimeout = 10 * time.Second

// Run shows the chat full-screen until the user quits or ctx ends. When it
// returns the conversation has been saved and no Generate call is running,
// unless a canceled Generate failed to return within engineStopTimeout,
// which Run reports as an error. A canceled ctx or SIGINT is a normal way
// to end and returns nil. A LoadConversation that cannot be read is
// reported before the screen is taken over.
func Run(ctx context.Context, eng Engine, cfg Config) error {
	if eng == nil {
		return errors.New("ui: no engine")
	}
	// Temporary files a killed save left behind (older than an hour, so
	// not another vkchat's save in progress).
	conversation.CleanTemp(cfg.conversationsDir(), time.Now())
	m := New(eng, cfg).(*Model)
	if m.loadErr != nil {
		return fmt.Errorf("load conversation: %w", m.loadErr)
	}
	m.baseCtx = ctx
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen()}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if cfg.Output != nil {
		opts = append(opts, tea.WithOutput(cfg.Output))
		m.copy = systemCopier(cfg.Output)
	}
	out := io.Writer(os.Stdout)
	if cfg.Output != nil {
		out = cfg.Output
	}
	// Autowrap off for the program's life: a row some terminal draws
	// wider than the window is clipped at its edge instead of wrapping
	// and scrolling the screen (see termtext.TerminalRow).
	_, _ = io.WriteString(out, termtext.AutowrapOff)
	p := tea.NewProgram(onTerminal{m}, opts...)
	_, err := p.Run()
	_, _ = io.WriteString(out, termtext.AutowrapOn)
	// Bubbletea has restored the terminal, also after a panic in Update,
	// View or a command (ErrProgramPanic). The conversation is saved
	// whichever way the program ended; a panic left the model in an
	// unknown state, so saving is guarded too.
	serr := safely(m.shutdown)
	werr := m.waitEngine(engineStopTimeout)
	if c, ok := m.eng.(io.Closer); ok && m.eng != eng && werr == nil {
		// A model /model opened is the chat's to close; the caller closes
		// the one it passed in.
		_ = c.Close()
	}
	// A signal ends the chat like ctrl+c does: the conversation is saved,
	// so it is not an error for the caller to print.
	if (errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil && !errors.Is(err, tea.ErrProgramPanic)) || errors.Is(err, tea.ErrInterrupted) {
		err = nil
	}
	if errors.Is(err, tea.ErrProgramPanic) {
		err = errors.New("internal error (a panic, its trace is above); the terminal was restored")
		if p := m.conv.Path(); p != "" && m.saver.Err() == nil && serr == nil {
			err = fmt.Errorf("%w and the conversation saved in %s", err, p)
		}
	}
	rerr := safely(func() {
		if e := m.rescueUnsaved(); e != nil {
			panic(e)
		}
	})
	return errors.Join(err, serr, rerr, werr)
}

// safely runs fn, turning a panic into an error.
func safely(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("saving after the program ended: %v", r)
			}
		}
	}()
	fn()
	return nil
}
