package ui

import (
	"math"
	"strings"
	"time"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/theme"
)

// surprisalLevel maps bits of surprisal to a heatmap colour on a log scale:
// ≥8 bits (p ≤ 1/256), ≥4, ≥2, ≥1, and under 1 bit. Unlike the probability
// scale, which lumps every p < 10% together, it tells a 1-in-20 choice from
// a 1-in-1000 one.
func surprisalLevel(bits float64) int {
	switch {
	case bits >= 8:
		return 0
	case bits >= 4:
		return 1
	case bits >= 2:
		return 2
	case bits >= 1:
		return 3
	default:
		return 4
	}
}

// heatLevel is the heatmap colour of step k of t, by probability or by
// surprisal.
func heatLevel(t *conversation.Turn, k int, bySurprisal bool) int {
	if bySurprisal {
		return surprisalLevel(t.Surprisal(k))
	}
	return theme.HeatLevel(t.ChosenProb(k))
}

// stripTurn is the reply the surprisal strip follows: the inspected one,
// else the newest reply generated here.
func (m *Model) stripTurn() *conversation.Turn {
	if m.focus == focusTranscript && m.insp.turn != nil {
		return m.insp.turn
	}
	rs := m.conv.Replies()
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

// stripRows is how many rows the surprisal strip takes: it shows while
// inspecting or with the heatmap on, when the transcript keeps some room.
func (m *Model) stripRows(transcriptH int) int {
	const rows = 3
	if (m.focus != focusTranscript && !m.heat) || m.showHelp || transcriptH < rows+4 {
		return 0
	}
	return rows
}

// surprisalData is the strip's data for the followed reply.
func (m *Model) surprisalData() panels.Surprisal {
	s := panels.Surprisal{Cursor: -1, BySurprisal: m.heatBySurprisal}
	t := m.stripTurn()
	if t == nil {
		return s
	}
	for k, st := range t.Steps {
		s.Bits = append(s.Bits, t.Surprisal(k))
		s.Entropy = append(s.Entropy, float64(st.Entropy)/math.Ln2)
	}
	if m.focus == focusTranscript && m.insp.turn == t {
		s.Cursor = m.insp.step
	}
	return s
}

// stripLines renders the strip for the main column.
func (m *Model) stripLines(width int) []string {
	return panels.SurprisalLines(m.styles, m.surprisalData(), width)
}

// toggleHeatBasis switches the heatmap between probability and surprisal,
// turning it on if it was off.
func (m *Model) toggleHeatBasis() {
	if !m.heat {
		m.heat = true
	} else {
		m.heatBySurprisal = !m.heatBySurprisal
	}
	m.invalidate()
	if m.heatBySurprisal {
		m.setStatus("heatmap by surprisal: red ≥ 8 bits (p ≤ 1/256) … green < 1 bit · s: by probability")
	} else {
		m.setStatus("heatmap by probability: red < 10% … green ≥ 90% · s: by surprisal")
	}
}

// funnelView is the funnel for the step the probability panel shows, and
// the setting to highlight when it is a preview of a change.
func (m *Model) funnelView() (sample.Funnel, sample.Params, string) {
	if strings.HasPrefix(m.probs.title, "preview") {
		return m.probs.funnel, m.probs.params, m.changed
	}
	return m.probs.funnel, m.probs.params, ""
}

// statusFunnel puts the funnel in the narrow status bar while the sampler
// is what the user looks at: inspecting, or previewing new settings.
func (m *Model) statusFunnel() *sample.Funnel {
	f := m.probs.funnel
	if f[0].Stage == sample.StageNone {
		return nil
	}
	if m.focus == focusTranscript || strings.HasPrefix(m.probs.title, "preview") {
		return &f
	}
	return nil
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
