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
}

const metricLabelW = 11

// PrefillText summarises the prompt pass.
func PrefillText(p *engine.PrefillInfo) string {
	if p == nil {
		return "—"
	}
	s := fmt.Sprintf("%d tok in %s · %s", p.Tokens, Duration(p.Duration), Rate(PerSecond(p.Tokens, p.Duration)))
	if p.Reused > 0 {
		s += fmt.Sprintf(" · %d reused", p.Reused)
	}
	return s
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

// MetricsLines renders the speed panel body.
func MetricsLines(st theme.Styles, m Metrics, width int) []string {
	valW := max(width-metricLabelW-1, 0)
	ttft := "—"
	if m.TTFT > 0 {
		ttft = Duration(m.TTFT)
	}
	now := 0.0
	if m.Last > 0 {
		now = 1 / m.Last.Seconds()
	}
	decode := fmt.Sprintf("%s now · %s avg", Rate(now), Rate(m.Avg))
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
	return []string{
		row(st, "load", metricLabelW, st.Value.Render(Duration(m.Load))),
		row(st, "prefill", metricLabelW, st.Value.Render(PrefillText(m.Prefill))),
		row(st, "first tok", metricLabelW, st.Value.Render(ttft)),
		row(st, "decode", metricLabelW, st.Value.Render(decode)),
		row(st, "speed", metricLabelW, spark),
		row(st, "generated", metricLabelW, st.Value.Render(fmt.Sprintf("%d tokens", m.Generated))),
		row(st, "context", metricLabelW, ctx),
	}
}
