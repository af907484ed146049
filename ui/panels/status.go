package panels

import (
	"fmt"
	"strings"
	"time"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Status is everything the side panels show, for the compact bar that
// replaces them on narrow terminals.
type Status struct {
	Params  sample.Params
	Changed string
	Metrics Metrics
	Memory  Memory
	Probs   Probs
	// Funnel, when set, takes the speed row's place: the inspector and a
	// settings change are about the sampler, not the speed.
	Funnel *sample.Funnel
}

// StatusLines renders up to rows rows of width cells: the sampler
// settings, then speed, context and memory, then the top candidates.
func StatusLines(st theme.Styles, s Status, width, rows int) []string {
	sep := st.Dim.Render(" · ")
	out := []string{strings.Join(settingItems(st, s.Params, s.Changed), "  ")}

	m := s.Metrics
	now := 0.0
	if m.Last > 0 {
		now = 1 / m.Last.Seconds()
	}
	speed := st.Label.Render("decode ") + st.Value.Render(Rate(now))
	if m.Avg > 0 {
		speed += st.Label.Render(" (avg ") + st.Value.Render(fmt.Sprintf("%.1f", m.Avg)) + st.Label.Render(")")
	}
	if len(m.Speeds) > 0 {
		speed += " " + st.Spark.Render(Sparkline(m.Speeds, 8))
	}
	parts := []string{speed}
	if p := m.Progress; p != nil && m.Prefill == nil {
		parts = []string{st.Label.Render("prefill ") + st.Value.Render(ProgressText(p.Done, p.Total, p.ETA()))}
	}
	switch {
	case m.TTFT > 0:
		parts = append(parts, st.Label.Render("ttft ")+st.Value.Render(Duration(m.TTFT)))
	case m.Waiting > 0:
		parts = append(parts, st.Label.Render("ttft ")+st.Value.Render(Duration(m.Waiting.Round(100*time.Millisecond))+"…"))
	}
	parts = append(parts,
		st.Label.Render("ctx ")+Bar(st, contextFrac(m.ContextUsed, m.ContextSize), 6)+" "+st.Value.Render(fmt.Sprintf("%d/%d", m.ContextUsed, m.ContextSize)),
		st.Label.Render("KV ")+st.Value.Render(Bytes(s.Memory.Stats.KVUsed)+"/"+Bytes(s.Memory.Stats.KVAllocated)),
		weightsItem(st, s.Memory.Stats),
	)
	out = append(out, strings.Join(parts, sep))
	if s.Funnel != nil {
		out[1] = FunnelLine(st, *s.Funnel)
	}

	p := s.Probs
	line := st.Label.Render(p.Title + ":")
	if len(p.Candidates) == 0 {
		line += " " + st.Dim.Render(p.Empty)
	}
	for i, c := range p.Candidates {
		if termtext.Width(line) > width {
			break
		}
		item := p.TokenLabel(c.ID) + " " + Percent(c.Final)
		switch {
		case c.Cut:
			item = st.Cut.Render(p.TokenLabel(c.ID) + " " + CutLabel(c))
		case p.HasChosen && c.ID == p.Chosen:
			item = st.Sampled.Render("●" + item)
		default:
			item = st.Value.Render(item)
		}
		if p.HasCursor && i == p.Cursor && !(p.HasChosen && c.ID == p.Chosen) {
			// The inspector's fork cursor.
			item = st.Selected.Render("▸") + item
		}
		if i == 0 {
			line += " " + item
		} else {
			line += sep + item
		}
	}
	if len(p.Candidates) > 0 {
		line += sep + st.Label.Render(fmt.Sprintf("H %.2f", p.Entropy))
	}
	out = append(out, line)
	if rows < len(out) {
		// Keep the settings and the distribution; speed is the first to go.
		switch rows {
		case 2:
			out = []string{out[0], out[2]}
		case 1:
			out = out[:1]
		default:
			out = nil
		}
	}
	return termtext.FitLines(out, width, len(out))
}

// weightsItem is the bar's weights: for a mixture-of-experts model also
// what one token reads of them.
func weightsItem(st theme.Styles, s engine.Stats) string {
	item := st.Label.Render("weights ") + st.Value.Render(Bytes(s.Weights))
	if s.ActiveFormula != "" {
		item += st.Label.Render(" (active ") + st.Value.Render(Bytes(s.WeightsActive)) + st.Label.Render(")")
	}
	return item
}
