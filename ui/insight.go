package ui

import (
	"time"

	"vkchat/ui/panels"
)

// stripRows is how many rows the surprisal strip takes.
func (m *Model) stripRows(transcriptH int) int {
	return m.insp.StripRows(m.inspecting(), m.pane.Shown, transcriptH)
}

// stripLines renders the surprisal strip of the followed reply.
func (m *Model) stripLines(width int) []string {
	t := m.insp.StripTurn(m.inspecting(), m.conv.Replies())
	return panels.SurprisalLines(m.styles, m.insp.Surprisal(t, m.inspecting()), width)
}

// readingState is the title bar's "reading prompt" with its progress.
func (m *Model) readingState() string {
	s := "reading prompt"
	if p := m.run.Progress; p != nil {
		s += " " + panels.ProgressText(p.Done, p.Total, p.ETA())
	} else if d := m.prefillElapsed(); d >= time.Second/10 {
		s += " " + panels.Duration(d.Round(100*time.Millisecond))
	}
	return s
}

// waiting is how long the running reply has waited for its first token.
func (m *Model) waiting() time.Duration {
	if m.gen == nil || m.run.TTFT > 0 || m.run.Generated > 0 || m.gen.started.IsZero() {
		return 0
	}
	return m.now().Sub(m.gen.started)
}

// moe reports whether the model routes its tokens to experts.
func (m *Model) moe() bool { return m.info.Experts > 0 }

// expertView is what the main column shows over the transcript: the
// lens view while it is on (the transcript keeps 4 rows for the cursor),
// else a mixture-of-experts model's routing (inspector.ExpertView); dense
// models, and the help screen, get none.
func (m *Model) expertView(h, width int, wide bool) []string {
	if m.pane.Shown {
		return nil
	}
	if m.inspecting() && m.insp.LensOn() {
		return m.insp.LensView(m.styles, m.eng.TokenText, inspectorHost{m}.LensStamp(), h-4, width)
	}
	if !m.moe() {
		return nil
	}
	return m.insp.ExpertView(m.styles, m.info.Experts, m.conv.Replies(), m.inspecting(), wide, m.hidePanels, h, width)
}
