package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// prefillTick is how often the "reading prompt" timer is redrawn while a
// long prompt is processed: often enough to show it is alive.
const prefillTick = 200 * time.Millisecond

// tickMsg drives the prefill timer. It carries the generation it belongs
// to, so a tick from a finished generation is dropped instead of starting
// a second tick chain that would make the timer run twice as fast.
type tickMsg struct{ gen int }

func tickFor(gen int) tea.Cmd {
	return tea.Tick(prefillTick, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// handleTick keeps ticking until its generation's first token, so the
// prompt timer and the time to first token count up; once tokens flow,
// their events redraw the screen.
func (m *Model) handleTick(msg tickMsg) tea.Cmd {
	if m.gen == nil || msg.gen != m.gen.id || m.run.Generated > 0 {
		return nil
	}
	return tickFor(msg.gen)
}

// prefillElapsed is how long the running generation has waited for its
// prompt to be processed; 0 when it is not waiting.
func (m *Model) prefillElapsed() time.Duration {
	if m.gen == nil || m.run.Prefill != nil || m.gen.started.IsZero() {
		return 0
	}
	return m.now().Sub(m.gen.started)
}
