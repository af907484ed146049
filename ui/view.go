package ui

import (
	"fmt"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/panels"
	"vkchat/ui/sampler"
	"vkchat/ui/termtext"
	"vkchat/ui/transcript"
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
	if m.picker != nil {
		// /model: the picker takes the screen until a model is chosen.
		return m.picker.View()
	}
	l := m.layout()
	if l.tiny {
		return m.tinyView()
	}
	rows := []string{m.titleBar(m.width)}
	main := m.mainColumn(l)
	if l.wide {
		m.frame = frame{first: 1, last: 1 + len(main), split: l.mainW}
		side := m.sideColumn(l, len(main))
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
	st := m.styles
	info := m.info
	parts := []string{}
	if a := termtext.Sanitize(info.Arch); a != "" {
		parts = append(parts, a)
	}
	if info.Params > 0 {
		parts = append(parts, panels.Count(info.Params))
	}
	if f := termtext.Sanitize(info.FileType); f != "" {
		parts = append(parts, f)
	}
	desc := strings.Join(parts, " ")
	mode := termtext.Sanitize(info.TemplateName)
	if info.Completion {
		mode = "completion"
	}
	dev := strings.TrimSpace(termtext.Sanitize(info.Backend) + " " + termtext.Sanitize(info.Device))
	if why := termtext.Sanitize(info.BackendReason); why != "" {
		dev += " (" + why + ")"
	}
	var meta []string
	for _, s := range []string{desc, contextLabel(info), mode, dev} {
		if s != "" {
			meta = append(meta, s)
		}
	}
	left := st.TitleName.Render(" vkchat ") + st.TitleBar.Render("│ ") + st.TitleName.Render(m.modelName())
	if len(meta) > 0 {
		left += st.TitleState.Render(" · " + strings.Join(meta, " · "))
	}
	state, stateStyle := "ready", st.TitleState
	switch {
	case m.gen != nil && m.gen.canceled:
		state, stateStyle = "stopping", st.Busy
	case m.gen != nil && m.run.prefill == nil:
		state, stateStyle = m.readingState(), st.Busy
	case m.gen != nil:
		state, stateStyle = "generating", st.Busy
	case m.focus == focusTranscript:
		state = "inspecting"
	}
	right := stateStyle.Render("● "+state) + st.TitleBar.Render(" ")
	room := w - termtext.Width(right)
	left = termtext.Truncate(left, max(room-1, 0))
	pad := max(w-termtext.Width(left)-termtext.Width(right), 0)
	return left + st.TitleBar.Render(strings.Repeat(" ", pad)) + right
}

// mainColumn is the transcript, the status bar (narrow), the separator
// with the status message, and the input.
func (m *Model) mainColumn(l layout) []string {
	var out []string
	if m.showHelp {
		lines := m.helpLines(l.mainW)
		m.helpOffset = min(max(m.helpOffset, 0), max(len(lines)-l.transcriptH, 0))
		lines = lines[m.helpOffset:]
		if len(lines) > l.transcriptH && l.transcriptH > 1 {
			lines = append(lines[:l.transcriptH-1:l.transcriptH-1], m.styles.Hint.Render("… pgdn for more"))
		}
		out = termtext.FitLines(lines, l.mainW, l.transcriptH)
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
// message, or the scroll position when scrolled up. A message too long
// for the line wraps under it, up to maxRows rows (the last cut with
// "…"), so a warning is read whole rather than cut at the width.
func (m *Model) separator(w, maxRows int) []string {
	st := m.styles
	text, style := m.status.text, st.StatusInfo
	if m.status.err {
		style = st.StatusError
	}
	if text == "" && !m.tr.Following() {
		text = "scrolled up · pgdn to follow"
	}
	if text == "" {
		return []string{st.Separator.Render(strings.Repeat("─", w))}
	}
	const lead, leadW = "── ", 3
	text = termtext.Sanitize(strings.ReplaceAll(text, "\n", " "))
	width, maxRows := max(w-leadW-1, 1), max(maxRows, 1)
	rows := termtext.WrapWords(termtext.Glyphs(text, func(int) int { return 0 }), width)
	joined := func(rs [][]termtext.Glyph) string {
		var sb strings.Builder
		for i, r := range rs {
			if i > 0 {
				sb.WriteByte(' ')
			}
			for _, g := range r {
				sb.WriteString(g.Text)
			}
		}
		return sb.String()
	}
	var out []string
	for i := 0; i < len(rows) && i < maxRows; i++ {
		row := joined(rows[i : i+1])
		if i == maxRows-1 {
			// The last row there is room for: what does not fit ends in "…".
			row = termtext.Truncate(joined(rows[i:]), width)
		}
		if i == 0 {
			line := st.Separator.Render(lead) + style.Render(row) + " "
			out = append(out, line+st.Separator.Render(strings.Repeat("─", max(w-termtext.Width(line), 0))))
		} else {
			out = append(out, strings.Repeat(" ", leadW)+style.Render(row))
		}
	}
	return out
}

func (m *Model) footer(rows int) []string {
	m.help.Width = m.width
	first := m.keys.inputHelp()
	if m.focus == focusTranscript {
		first = m.keys.inspectHelp(m.moe())
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

// helpLines is the F1 screen: every key, every command, where chats go.
func (m *Model) helpLines(w int) []string {
	if m.prompt != nil {
		return m.promptLines(w)
	}
	if m.chats != nil {
		return m.chatsLines(w)
	}
	st := m.styles
	out := []string{st.PanelTitle.Render("Keys") + st.Hint.Render("  (f1 or esc closes · pgup/pgdn scroll)"), ""}
	out = append(out, m.keyLines(w)...)
	out = append(out, "", st.PanelTitle.Render("Commands"), "")
	const usageW = 18 // "/frequency VALUE" and a gap of two
	for _, c := range m.cmds.Commands() {
		desc := transcript.PlainRows(c.Help, st.Hint, max(w-usageW, 10))
		if termtext.Width(c.Usage()) > usageW-2 {
			// Too long to leave a gap before the description (/think's
			// choices): it takes a row of its own, the description under it.
			out = append(out, st.Value.Render(termtext.Truncate(c.Usage(), w)))
			for _, d := range desc {
				out = append(out, strings.Repeat(" ", usageW)+d)
			}
			continue
		}
		for i, d := range desc {
			lead := strings.Repeat(" ", usageW)
			if i == 0 {
				lead = st.Value.Render(fmt.Sprintf("%-*s", usageW, c.Usage()))
			}
			out = append(out, lead+d)
		}
	}
	out = append(out, "", st.Hint.Render("ctrl+j also adds a line, for terminals that keep alt+enter for themselves."))
	out = append(out, st.Hint.Render("Start a message with // to send a line beginning with /."))
	out = append(out, st.Hint.Render("Conversations are saved in "+termtext.Sanitize(m.cfg.conversationsDir())))
	return out
}

func (m *Model) probsData() panels.Probs {
	return m.insp.ProbsPanel(m.eng.TokenText, m.inspecting())
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

// sideColumn stacks the panels in h rows. The core ones always show:
// the next-token distribution, speed and memory (as full panels when they
// fit, else as the few rows of CoreLines). The optional ones (sampler,
// the MoE router, funnel, latency) take what room is left, in that order,
// unless f2 hid them; the distribution takes the rest. The memory panel
// gives up its formulas before the router panel goes (routerMemory).
func (m *Model) sideColumn(l layout, h int) []string {
	st := m.styles
	w := l.sideW
	inner := panels.InnerWidth(w)
	metricsData := m.metricsData()
	memData := panels.Memory{Info: m.info, Stats: m.stats}
	const minProbs = 2 + 2 + 3 // borders, title, header, three candidates
	room := h
	fits := func(box []string) bool {
		if room-len(box) >= minProbs {
			room -= len(box)
			return true
		}
		return false
	}
	metrics := panels.Box(st, "Speed", panels.MetricsLines(st, metricsData, inner), w)
	memBox := func(d panels.MemoryDetail) []string {
		return panels.Box(st, "Memory", panels.MemoryLinesDetail(st, memData, inner, d), w)
	}
	coreBox := func(memory []string) []string {
		if room-len(metrics)-len(memory) >= minProbs {
			return append(append([]string(nil), metrics...), memory...)
		}
		return panels.Box(st, "Speed · Memory", panels.CoreLines(st, metricsData, memData, inner), w)
	}
	sampler := panels.Box(st, "Sampler", panels.SamplerLines(st, m.smp.Params, m.smp.Changed, inner), w)
	var r panels.Router
	detail := panels.MemoryFull
	if m.moe() && !m.hidePanels {
		r = m.insp.RouterPanel(m.info.Experts)
		detail = m.routerMemory(r, func(d panels.MemoryDetail) int {
			left := room - len(coreBox(memBox(d)))
			if left-len(sampler) >= minProbs {
				left -= len(sampler)
			}
			return left - minProbs - 2
		})
	}
	core := coreBox(memBox(detail))
	room -= len(core)

	var router, funnel, latency []string
	if !m.hidePanels {
		if !fits(sampler) {
			sampler = nil
		}
		if m.moe() {
			if rows := room - minProbs - 2; rows >= 2 {
				router = panels.Box(st, "Router · "+panels.RouterTitle(r), panels.RouterLines(st, r, inner, rows), w)
				room -= len(router)
			}
		}
		fv, fp, changed := m.insp.FunnelView(m.smp.Changed)
		if box := panels.Box(st, "Sampler funnel", panels.FunnelLines(st, fv, fp, changed, inner), w); fits(box) {
			funnel = box
		}
		if box := panels.Box(st, "Latency", panels.LatencyLines(st, metricsData.Latencies, inner), w); fits(box) {
			latency = box
		}
	} else {
		sampler = nil
	}
	pd := m.probsData()
	probRows := max(min(room-2, len(pd.Candidates)+2), 2)
	probs := panels.Box(st, "Next token", panels.ProbsLines(st, pd, inner, probRows), w)

	var out []string
	for _, box := range [][]string{sampler, probs, router, funnel, latency, core} {
		out = append(out, box...)
	}
	return termtext.FitLines(out, w, h)
}

// routerMemory is how much of the memory panel to show beside the router
// panel: the most detail with which the router still shows every layer
// (up to eight), else the most with which it shows at least two rows,
// else all of it (the router does not fit either way). rowsWith is the
// router's body rows with the memory panel at a detail.
func (m *Model) routerMemory(r panels.Router, rowsWith func(panels.MemoryDetail) int) panels.MemoryDetail {
	layers := len(r.Layers)
	if layers == 0 {
		// before the first token: the rows its routing will take, so
		// the panels do not move when it comes
		layers = m.info.Layers
	}
	want := min(max(layers, 2), 8)
	details := []panels.MemoryDetail{panels.MemoryFull, panels.MemoryKV, panels.MemoryRows}
	for _, need := range []int{want, 2} {
		for _, d := range details {
			if rowsWith(d) >= need {
				return d
			}
		}
	}
	return panels.MemoryFull
}

// contextLabel is the context window for the title bar, with the model's
// trained context when they differ ("ctx 2048 of 256 trained").
func contextLabel(info engine.ModelInfo) string {
	switch {
	case info.ContextSize <= 0:
		return ""
	case info.TrainContext <= 0 || info.TrainContext == info.ContextSize:
		return fmt.Sprintf("ctx %d", info.ContextSize)
	}
	return fmt.Sprintf("ctx %d of %d trained", info.ContextSize, info.TrainContext)
}
