package panels

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Latency summarises per-token decode times.
type Latency struct {
	P50, P90, P99, Max time.Duration
	N                  int
}

// LatencyOf computes the percentiles (nearest rank) of ds.
func LatencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Latency{P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: s[len(s)-1], N: len(s)}
}

// Histogram counts ds into width equal buckets from the fastest to the
// slowest and draws them as one row of bars, fastest on the left.
func Histogram(ds []time.Duration, width int) string {
	if width <= 0 || len(ds) == 0 {
		return ""
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	counts := make([]float64, width)
	for _, d := range ds {
		i := 0
		if hi > lo {
			i = int(float64(d-lo) / float64(hi-lo) * float64(width-1))
		}
		counts[i]++
	}
	top := slices.Max(counts)
	var b strings.Builder
	for _, c := range counts {
		b.WriteRune(stripCell(c, top))
	}
	return b.String()
}

// LatencyLines are the histogram row and the percentile row of the speed panel.
func LatencyLines(st theme.Styles, ds []time.Duration, width int) []string {
	valW := max(width-metricLabelW-1, 0)
	if len(ds) == 0 {
		return []string{row(st, "latency", metricLabelW, st.Dim.Render("—"))}
	}
	l := LatencyOf(ds)
	lo, hi := slices.Min(ds), slices.Max(ds)
	ends := Duration(lo) + " … " + Duration(hi)
	hw := max(valW-termtext.Width(ends)-1, 1)
	out := []string{row(st, "latency", metricLabelW, st.Spark.Render(Histogram(ds, min(hw, 32)))+" "+st.Dim.Render(ends))}
	lo50 := fmt.Sprintf("p50 %s p90 %s", Duration(l.P50), Duration(l.P90))
	hi99 := fmt.Sprintf("p99 %s max %s", Duration(l.P99), Duration(l.Max))
	if len(lo50)+1+len(hi99) <= valW {
		return append(out, row(st, "", metricLabelW, st.Value.Render(lo50+" "+hi99)))
	}
	return append(out, row(st, "", metricLabelW, st.Value.Render(lo50)), row(st, "", metricLabelW, st.Value.Render(hi99)))
}

// ProgressText is a prompt still being read: "384/1,024 · ETA 2.1s".
func ProgressText(done, total int, eta time.Duration) string {
	if total <= 0 {
		return "—"
	}
	s := fmt.Sprintf("%s/%s", Grouped(int64(done)), Grouped(int64(total)))
	if eta > 0 {
		s += " · ETA " + Duration(eta.Round(100*time.Millisecond))
	}
	return s
}
