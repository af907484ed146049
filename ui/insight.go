package ui

import (
	"time"

	"vkchat/ui/panels"
)

// stripRows is how many rows the surprisal strip takes.
func (m *Model) stripRows(transcriptH int) int {
	return m.insp.StripRows(m.inspecting(), m.showHelp, transcriptH)
}

// stripLines renders the surprisal strip of the followed reply.
func (m *Model) stripLines(width int) []string {
	t := m.insp.StripTurn(m.inspecting(), m.conv.Replies())
	return panels.SurprisalLines(m.styles, m.insp.Surprisal(t, m.inspecting()), width)
}

// readingState is the title bar's "reading prompt" with its progress.
func (m *Model) readingState() string {
	s := "reading prompt"
	if p := m.run.progress; p != nil {
		s += " " + panels.ProgressText(p.Done, p.Total, p.ETA())
	} else if d := m.prefillElapsed(); d >= time.Second/10 {
		s += " " + panels.Duration(d.Round(100*time.Millisecond))
	}
	return s
}

// waiting is how long the running reply has waited for its first token.
func (m *Model) waiting() time.Duration {
	if m.gen == nil || m.run.ttft > 0 || m.run.generated > 0 || m.gen.started.IsZero() {
		return 0
	}
	return m.now().Sub(m.gen.started)
}

// latencyHistory bounds the decode times kept for the histogram.
const latencyHistory = 512
