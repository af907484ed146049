package panels

import (
	"fmt"
	"time"

	"vkchat/ui/theme"
)

// CoreLines is the speed and memory panels in a few rows, for side columns
// too short for both: prefill and first token, decode speed, context fill,
// and the KV cache used and allocated. These are what the app is for, so
// they stay on screen at every size that has a side column.
func CoreLines(st theme.Styles, m Metrics, mem Memory, width int) []string {
	sep := st.Dim.Render(" · ")
	items := []string{prefillItem(st, m), ttftItem(st, m), decodeItem(st, m)}
	rows := flow(items, sep, width)
	rows = append(rows, contextItem(st, m, width))
	s := mem.Stats
	rows = append(rows, flow([]string{
		st.Label.Render("KV ") + st.Value.Render(Bytes(s.KVUsed)) + st.Label.Render(" used of ") + st.Value.Render(Bytes(s.KVAllocated)),
		weightsItem(st, s),
	}, sep, width)...)
	return rows
}

// prefillItem is the prompt pass: "prefill 24 tok · 80ms", or its progress.
func prefillItem(st theme.Styles, m Metrics) string {
	if p := m.Progress; p != nil && m.Prefill == nil {
		return st.Label.Render("prefill ") + st.Value.Render(ProgressText(p.Done, p.Total, p.ETA()))
	}
	if m.Prefill == nil {
		return st.Label.Render("prefill ") + st.Dim.Render("—")
	}
	return st.Label.Render("prefill ") + st.Value.Render(fmt.Sprintf("%d tok %s", m.Prefill.Tokens, Duration(m.Prefill.Duration)))
}

// ttftItem is the time to the first token, counting while it waits.
func ttftItem(st theme.Styles, m Metrics) string {
	v := st.Dim.Render("—")
	switch {
	case m.TTFT > 0:
		v = st.Value.Render(Duration(m.TTFT))
	case m.Waiting > 0:
		v = st.Value.Render(Duration(m.Waiting.Round(100*time.Millisecond)) + "…")
	}
	return st.Label.Render("first tok ") + v
}

// decodeItem is the decode speed now and on average.
func decodeItem(st theme.Styles, m Metrics) string {
	now := 0.0
	if m.Last > 0 {
		now = 1 / m.Last.Seconds()
	}
	s := st.Label.Render("decode ") + st.Value.Render(Rate(now))
	if m.Avg > 0 {
		s += st.Label.Render(" avg ") + st.Value.Render(fmt.Sprintf("%.1f", m.Avg))
	}
	return s
}

// contextItem is the context fill as a bar and "used/size (pct)".
func contextItem(st theme.Styles, m Metrics, width int) string {
	text := ContextText(m.ContextUsed, m.ContextSize)
	label := "context "
	barW := min(width-len(label)-len(text)-1, 24)
	if barW < 4 {
		return st.Label.Render(label) + st.Value.Render(text)
	}
	return st.Label.Render(label) + Bar(st, contextFrac(m.ContextUsed, m.ContextSize), barW) + " " + st.Value.Render(text)
}
