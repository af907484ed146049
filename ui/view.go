package ui

import (
	"fmt"
	"strings"

	"vkchat/ui/helppane"
	"vkchat/ui/panels"
	"vkchat/ui/sampler"
	"vkchat/ui/termtext"
)

// Layout thresholds: below wideWidth the side panels fold into a status
// bar; below minWidth×minHeight only a notice fits.
const (
	wideWidth  = 100
	wideHeight = 16
	minWidth   = 20
	minHeight  = 8
)

// layout is how the screen is divided for the current size.
type layout struct {
	tiny, wide   bool
	mainW, sideW int
	transcriptH  int
	statusH      int // the compact status bar (narrow only)
	inputH       int
	footerH      int
	sepH         int      // the separator and its status message's wrapped rows
	stripH       int      // the surprisal strip under the transcript
	experts      []string // the expert map, or the narrow router panel (MoE models)
}

func (m *Model) layout() layout {
	w, h := m.width, m.height
	if w < minWidth || h < minHeight {
		m.tr.SetSize(0, 0)
		return layout{tiny: true}
	}
	l := layout{wide: w >= wideWidth && h >= wideHeight, footerH: 1}
	if h >= 16 {
		l.footerH = 2
	}
	if l.wide {
		l.sideW = min(max(w*3/8, 40), 64)
		l.mainW = w - l.sideW - 1
	} else {
		l.mainW = w
		switch {
		case h >= 20:
			l.statusH = 3
		case h >= 14:
			l.statusH = 2
		default:
			l.statusH = 1
		}
	}
	if m.hidePanels {
		// f2: the bar's sampler (or funnel) row is an optional panel too;
		// StatusLines gives it up first
		l.statusH = min(l.statusH, 2)
	}
	m.input.SetSize(l.mainW, min(max(h/6, 1), 8))
	l.inputH = m.input.Height()
	l.sepH = len(m.separator(l.mainW, statusRows(h)))
	// title, separator and footer around the transcript
	l.transcriptH = max(h-1-l.footerH-l.sepH-l.inputH-l.statusH, 1)
	l.stripH = m.stripRows(l.transcriptH)
	l.transcriptH -= l.stripH
	l.experts = m.expertView(l.transcriptH, l.mainW, l.wide)
	l.transcriptH -= len(l.experts)
	m.tr.SetSize(l.mainW, l.transcriptH)
	return l
}

// View implements tea.Model. It always returns exactly height rows of
// exactly width cells, so nothing the model writes can push the layout.
func (m *Model) View() string {
	// No side column unless this view lays one out (the picker, a tiny
	// window): onTerminal splits rows where the frame says.
	m.frame = frame{}
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.sw.Picker != nil {
		// /model: the picker takes the screen until a model is chosen.
		return m.sw.Picker.View()
	}
	l := m.layout()
	if l.tiny {
		return m.tinyView()
	}
	rows := []string{m.titleBar(m.width)}
	main := m.mainColumn(l)
	if l.wide {
		m.frame = frame{first: 1, last: 1 + len(main), split: l.mainW}
		side := panels.SideColumn(m.styles, m.sideData(), l.sideW, len(main))
		for i := range main {
			main[i] = termtext.Fit(main[i], l.mainW) + " " + side[i]
		}
	}
	rows = append(rows, main...)
	rows = append(rows, m.footer(l.footerH)...)
	return strings.Join(termtext.FitLines(rows, m.width, m.height), "\n")
}

func (m *Model) tinyView() string {
	msg := []string{"vkchat", "window too small", fmt.Sprintf("%dx%d", m.width, m.height)}
	return strings.Join(termtext.FitLines(msg, m.width, m.height), "\n")
}

func (m *Model) titleBar(w int) string {
	state, busy := "ready", true
	switch {
	case m.gen != nil && m.gen.canceled:
		state = "stopping"
	case m.gen != nil && m.run.Prefill == nil:
		state = m.readingState()
	case m.gen != nil:
		state = "generating"
	case m.focus == focusTranscript:
		state, busy = "inspecting", false
	default:
		busy = false
	}
	return panels.TitleBar(m.styles, m.info, m.modelName(), state, busy, w)
}

// mainColumn is the transcript, the status bar (narrow), the separator
// with the status message, and the input.
func (m *Model) mainColumn(l layout) []string {
	var out []string
	if m.pane.Shown {
		out = m.pane.View(m.styles, m.helpContent(), l.mainW, l.transcriptH)
	} else {
		out = m.transcriptView()
	}
	if len(l.experts) > 0 {
		out = append(out, termtext.FitLines(l.experts, l.mainW, len(l.experts))...)
	}
	if l.stripH > 0 {
		out = append(out, termtext.FitLines(m.stripLines(l.mainW), l.mainW, l.stripH)...)
	}
	if l.statusH > 0 {
		out = append(out, panels.StatusLines(m.styles, m.statusData(), l.mainW, l.statusH)...)
	}
	out = append(out, m.separator(l.mainW, l.sepH)...)
	out = append(out, m.input.View(m.styles)...)
	return out
}

// statusRows is how many rows a long status message may wrap to in a
// window h rows high: the transcript keeps the rest.
func statusRows(h int) int {
	switch {
	case h >= 20:
		return 3
	case h >= 12:
		return 2
	}
	return 1
}

// separator divides the transcript from the input and carries the status
// message, or the scroll position when scrolled up.
func (m *Model) separator(w, maxRows int) []string {
	return panels.Separator(m.styles, m.status.text, m.status.err, m.tr.Following(), w, maxRows)
}

func (m *Model) footer(rows int) []string {
	m.help.Width = m.width
	first := m.keys.inputHelp(m.inspKeys.Inspect)
	if m.focus == focusTranscript {
		first = m.inspKeys.Footer(m.moe(), m.keys.Help, m.keys.Quit, m.keys.Stop)
	}
	out := []string{m.help.ShortHelpView(first)}
	if rows > 1 {
		row := m.help.ShortHelpView(m.smp.Keys.Help())
		if strings.HasSuffix(row, m.help.Ellipsis) {
			m.help.Width = m.width - len(sampler.AltPrefix) - 1
			row = m.styles.Help.ShortKey.Render(sampler.AltPrefix) + " " + m.help.ShortHelpView(m.smp.Keys.Compact())
		}
		out = append(out, row)
	}
	return out
}

// helpContent is what the help pane lists and mentions.
func (m *Model) helpContent() helppane.Content {
	return helppane.Content{Keys: m.keys.reference(m.smp.Keys, m.inspKeys), Commands: m.cmds.Commands(), SavedIn: m.cfg.conversationsDir(),
		Current: m.conv.Path(), ThinkingOff: m.think.Off, Effort: m.think.Effort}
}

func (m *Model) probsData() panels.Probs {
	return m.insp.ProbsPanel(m.eng.TokenText, m.inspecting())
}

func (m *Model) sideData() panels.Side {
	d := panels.Side{Metrics: m.metricsData(), Memory: panels.Memory{Info: m.info, Stats: m.stats},
		Params: m.smp.Params, Changed: m.smp.Changed, Probs: m.probsData(), HidePanels: m.hidePanels}
	if m.moe() && !m.hidePanels {
		r := m.insp.RouterPanel(m.info.Experts)
		r.Gating = m.info.Gating
		d.Router = &r
	}
	d.Funnel, d.FunnelParams, d.FunnelChanged = m.insp.FunnelView(m.smp.Changed)
	return d
}

func (m *Model) statusData() panels.Status {
	return panels.Status{
		Params:  m.smp.Params,
		Changed: m.smp.Changed,
		Metrics: m.metricsData(),
		Memory:  panels.Memory{Info: m.info, Stats: m.stats},
		Probs:   m.probsData(),
		Funnel:  m.insp.StatusFunnel(m.inspecting()),
	}
}
