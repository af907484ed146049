package panels

import (
	"fmt"
	"strings"

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

	out = append(out, coreRow(st, s, width))
	if s.Funnel != nil {
		// The inspector and a settings change are about the sampler: the
		// funnel takes the settings row, the core row stays.
		out[0] = FunnelLine(st, *s.Funnel)
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
		line += sep + st.Label.Render(fmt.Sprintf("H %.2f bits", EntropyBits(p.Entropy)))
	}
	out = append(out, line)
	if rows < len(out) {
		// The settings (or funnel) row is the first to go: speed, memory
		// and the distribution are what the app is for.
		out = out[len(out)-max(rows, 0):]
	}
	return termtext.FitLines(out, width, len(out))
}

// coreRow is speed, first token, context fill and the KV cache on one
// row; the sparkline and the weights follow where there is room.
func coreRow(st theme.Styles, s Status, width int) string {
	sep := st.Dim.Render(" · ")
	m := s.Metrics
	items := []string{decodeItem(st, m)}
	if p := m.Progress; p != nil && m.Prefill == nil {
		items = []string{prefillItem(st, m)}
	}
	ttft := TTFTText(m)
	items = append(items,
		st.Label.Render("ttft ")+st.Value.Render(ttft),
		st.Label.Render("ctx ")+Bar(st, contextFrac(m.ContextUsed, m.ContextSize), 6)+" "+st.Value.Render(fmt.Sprintf("%d/%d", m.ContextUsed, m.ContextSize)),
		kvItem(st, s.Memory.Stats),
	)
	line := strings.Join(items, sep)
	// Too wide: the average goes, then the context bar, so the core
	// figures keep their place.
	if termtext.Width(line) > width && m.Avg > 0 && (m.Progress == nil || m.Prefill != nil) {
		items[0] = decodeItem(st, Metrics{Last: m.Last})
		line = strings.Join(items, sep)
	}
	if termtext.Width(line) > width {
		items[2] = st.Label.Render("ctx ") + st.Value.Render(fmt.Sprintf("%d/%d", m.ContextUsed, m.ContextSize))
		line = strings.Join(items, sep)
	}
	if len(m.Speeds) > 0 {
		if spark := " " + st.Spark.Render(Sparkline(m.Speeds, 8)); termtext.Width(line+spark) <= width {
			items[0] += spark
			line = strings.Join(items, sep)
		}
	}
	if w := weightsItem(st, s.Memory.Stats); termtext.Width(line+sep+w) <= width {
		line += sep + w
	}
	return line
}

// kvItem is the bar's KV cache, and a hybrid model's recurrent state
// beside it (a fixed size, whatever the context).
func kvItem(st theme.Styles, s engine.Stats) string {
	item := st.Label.Render("KV ") + st.Value.Render(Bytes(s.KVUsed)+"/"+Bytes(s.KVAllocated))
	if s.StateBytes > 0 {
		item += st.Label.Render(" + state ") + st.Value.Render(Bytes(s.StateBytes))
	}
	return item
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
