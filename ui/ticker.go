package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/internal/stream"
)

// handleTick keeps ticking until its generation's first token, so the
// prompt timer and the time to first token count up; once tokens flow,
// their events redraw the screen.
func (m *Model) handleTick(msg stream.TickMsg) tea.Cmd {
	if m.gen == nil || msg.Gen != m.gen.id || m.run.Generated > 0 {
		return nil
	}
	return stream.Tick(msg.Gen)
}

// prefillElapsed is how long the running generation has waited for its
// prompt to be processed; 0 when it is not waiting.
func (m *Model) prefillElapsed() time.Duration {
	if m.gen == nil || m.run.Prefill != nil || m.gen.started.IsZero() {
		return 0
	}
	return m.now().Sub(m.gen.started)
}
