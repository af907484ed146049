package panels

import (
	"fmt"
	"time"

	"vkchat/runtime/engine"
	"vkchat/ui/theme"
)

// Metrics is what the speed panel shows about the latest generation.
type Metrics struct {
	Load    time.Duration
	Prefill *engine.PrefillInfo // nil until the prompt has been processed
	TTFT    time.Duration       // 0 until the first token
	// Last is the duration of the most recent token.
	Last time.Duration
	// Avg is the mean decode speed in tokens per second, the first token
	// excluded because it also pays for warm-up.
	Avg         float64
	Speeds      []float64 // recent per-token speeds, oldest first
	Generated   int
	ContextUsed int
	ContextSize int
	// Latencies are the recent per-token decode times, for the histogram.
	Latencies []time.Duration
	// Progress is the prompt being read in chunks (nil when it is not);
	// Waiting is how long the reply has waited for its first token so far.
	Progress *engine.PrefillProgress
	Waiting  time.Duration
	// Spec is the reply's speculation so far (its latest mark); nil
	// without.
	Spec *engine.SpecMark
}

const metricLabelW = 11

// PrefillText summarises the prompt pass: tokens computed and the time.
func PrefillText(p *engine.PrefillInfo) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%d tok · %s", p.Tokens, Duration(p.Duration))
}

// ContextText is "used/size (pct)".
func ContextText(used, size int) string {
	if size <= 0 {
		return fmt.Sprintf("%d", used)
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", used, size, 100*float64(used)/float64(size))
}

func contextFrac(used, size int) float64 {
	if size <= 0 {
		return 0
	}
	return float64(used) / float64(size)
}

// TTFTText is the time to first token: measured, or how long the reply
// has waited so far (…), or — before any reply.
func TTFTText(m Metrics) string {
	switch {
	case m.TTFT > 0:
		return Duration(m.TTFT)
	case m.Waiting > 0:
		return Duration(m.Waiting.Round(100*time.Millisecond)) + "…"
	}
	return "—"
}

// MetricsLines renders the speed panel body; the latency histogram is a
// panel of its own (LatencyLines), one of those that give way first.
func MetricsLines(st theme.Styles, m Metrics, width int) []string {
	valW := max(width-metricLabelW-1, 0)
	ttft := TTFTText(m)
	prefill := PrefillText(m.Prefill)
	if p := m.Progress; p != nil && m.Prefill == nil {
		prefill = ProgressText(p.Done, p.Total, p.ETA())
	}
	now := 0.0
	if m.Last > 0 {
		now = 1 / m.Last.Seconds()
	}
	prefillRate := "—"
	switch {
	case m.Prefill != nil:
		prefillRate = Rate(PerSecond(m.Prefill.Tokens, m.Prefill.Duration))
	case m.Progress != nil:
		prefillRate = Rate(PerSecond(m.Progress.Done, m.Progress.Elapsed))
	}
	spark := st.Spark.Render(Sparkline(m.Speeds, valW))
	if len(m.Speeds) == 0 {
		spark = st.Dim.Render("—")
	}
	ctxText := ContextText(m.ContextUsed, m.ContextSize)
	barW := max(valW-len(ctxText)-1, 0)
	ctx := ctxText
	if barW >= 4 {
		ctx = Bar(st, contextFrac(m.ContextUsed, m.ContextSize), min(barW, 24)) + " " + ctxText
	}
	avg := Rate(m.Avg)
	if note := " (first token excluded)"; m.Avg > 0 && len(avg)+len(note) <= valW {
		avg += st.Dim.Render(note)
	}
	rows := []string{
		row(st, "load", metricLabelW, st.Value.Render(Duration(m.Load))),
		row(st, "prefill", metricLabelW, st.Value.Render(prefill)),
		row(st, "prefill/s", metricLabelW, st.Value.Render(prefillRate)),
	}
	if m.Prefill != nil && m.Prefill.Reused > 0 {
		rows = append(rows, row(st, "KV reused", metricLabelW, st.Value.Render(fmt.Sprintf("%d tok", m.Prefill.Reused))))
	}
	if m.Prefill != nil && m.Prefill.Reread > 0 {
		rows = append(rows, row(st, "re-read", metricLabelW, st.Value.Render(fmt.Sprintf("%d tok · %s", m.Prefill.Reread, Duration(m.Prefill.RereadDuration)))))
	}
	rows = append(rows,
		row(st, "first tok", metricLabelW, st.Value.Render(ttft)),
		row(st, "decode now", metricLabelW, st.Value.Render(Rate(now))),
		row(st, "decode avg", metricLabelW, st.Value.Render(avg)),
		row(st, "speed", metricLabelW, spark),
	)
	rows = append(rows, SpecRows(st, m.Spec)...)
	return append(rows,
		row(st, "generated", metricLabelW, st.Value.Render(fmt.Sprintf("%d tokens", m.Generated))),
		row(st, "context", metricLabelW, ctx),
	)
}

// SpecRows are the speed panel's rows on speculative decoding: the
// source and the share of drafts accepted, and the reply tokens each
// verification gave (a plain decode step gives one).
func SpecRows(st theme.Styles, m *engine.SpecMark) []string {
	if m == nil {
		return nil
	}
	t := m.Totals
	return []string{
		row(st, "spec", metricLabelW, st.Value.Render(fmt.Sprintf("%s · %.0f%% of %d kept", m.Source, 100*t.AcceptRate(), t.Drafted))),
		row(st, "per verify", metricLabelW, st.Value.Render(fmt.Sprintf("%.2f tok (%d rounds)", t.PerRound(), t.Rounds))),
	}
}
