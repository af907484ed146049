package panels

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// latencies are 57 decode times: most near 31ms, a few slow ones.
func latencies() []time.Duration {
	var ds []time.Duration
	for i := range 57 {
		d := 30*time.Millisecond + time.Duration(i%5)*time.Millisecond
		if i%19 == 7 {
			d = 80 * time.Millisecond
		}
		ds = append(ds, d)
	}
	return ds
}

func goldenFunnel() sample.Funnel {
	return sample.Funnel{
		{Stage: sample.StagePenalties, Left: 32000, Exact: true, Mass: 1, Penalized: 0},
		{Stage: sample.StageTopK, Left: 40, Exact: true, Mass: 0.97, Active: true},
		{Stage: sample.StageTopP, Left: 12, Exact: true, Mass: 0.951, Active: true},
		{Stage: sample.StageMinP, Left: 8, Exact: true, Mass: 0.93, Active: true},
		{Stage: sample.StageTemperature, Left: 8, Exact: true, Mass: 0.93, Active: true},
		{Stage: sample.StageDraw, Left: 1, Exact: true, Mass: 0.61, Active: true},
	}
}

// TestInsightGoldens pins the funnel, the surprisal strip, the latency
// rows and a prompt being read, at a narrow and a wide side column.
func TestInsightGoldens(t *testing.T) {
	st := asciiStyles()
	met, mem, pr := goldenData()
	reading := met
	reading.Prefill, reading.TTFT, reading.Speeds, reading.Latencies, reading.Generated = nil, 0, nil, nil, 0
	reading.Progress = &engine.PrefillProgress{Done: 384, Total: 1024, Elapsed: 1200 * time.Millisecond}
	reading.Waiting = 1260 * time.Millisecond
	bits := []float64{0.1, 0.3, 2.5, 0.05, 7.9, 1.2, 0.4, 12, 0.2, 3.3, 0.6, 0.01}
	ent := []float64{0.8, 1.1, 3.2, 0.3, 5.5, 2.0, 1.0, 6.1, 0.9, 3.0, 1.4, 0.1}
	sur := Surprisal{Bits: bits, Entropy: ent, Cursor: 4, BySurprisal: true}
	p := sample.Defaults()
	f := goldenFunnel()
	for _, w := range []int{40, 60} {
		inner := InnerWidth(w)
		var b strings.Builder
		for _, box := range [][]string{
			Box(st, "Sampler funnel", FunnelLines(st, f, p, SetTopP, inner), w),
			Box(st, "Speed", MetricsLines(st, reading, inner), w),
			Box(st, "Surprisal", SurprisalLines(st, sur, inner), w),
		} {
			b.WriteString(strings.Join(box, "\n") + "\n")
		}
		b.WriteString(strings.Join(StatusLines(st, Status{Params: p, Metrics: reading, Memory: mem, Probs: pr}, 80, 3), "\n") + "\n")
		b.WriteString(strings.Join(StatusLines(st, Status{Params: p, Metrics: met, Memory: mem, Probs: pr, Funnel: &f}, 80, 3), "\n") + "\n")
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(b.String())) })
	}
}

func TestLatencyOf(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		in                  []time.Duration
		p50, p90, p99, maxd int
	}{
		{ms(5), 5, 5, 5, 5},
		{ms(40, 10, 30, 20), 20, 40, 40, 40},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 5, 9, 10, 10},
	}
	for _, tc := range cases {
		l := LatencyOf(tc.in)
		got := []time.Duration{l.P50, l.P90, l.P99, l.Max}
		want := ms(tc.p50, tc.p90, tc.p99, tc.maxd)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%v: percentiles %v, want %v", tc.in, got, want)
				break
			}
		}
	}
	if l := LatencyOf(nil); l.N != 0 || l.Max != 0 {
		t.Errorf("empty: %+v", l)
	}
}

func TestHistogram(t *testing.T) {
	// Three fast, one slow: the first bucket is full, the last a third.
	h := []rune(Histogram([]time.Duration{10, 10, 10, 40}, 4))
	if len(h) != 4 || h[0] != '█' || h[1] != ' ' || h[3] != '▃' {
		t.Errorf("histogram %q", string(h))
	}
	if h := Histogram([]time.Duration{7, 7}, 3); []rune(h)[0] != '█' {
		t.Errorf("equal durations: %q, want everything in the first bucket", h)
	}
}

func TestSurprisalSummary(t *testing.T) {
	s := Surprisal{Bits: []float64{1, 2, 3}}
	if s.Mean() != 2 || math.Abs(s.Perplexity()-4) > 1e-12 {
		t.Errorf("mean %v perplexity %v, want 2 and 4", s.Mean(), s.Perplexity())
	}
	cases := []struct{ n, cursor, width, from int }{
		{5, -1, 10, 0},
		{50, -1, 10, 40},
		{50, 45, 10, 40},
		{50, 3, 10, 0},
		{50, 20, 10, 15},
	}
	for _, tc := range cases {
		from, to := stripWindow(tc.n, tc.cursor, tc.width)
		if from != tc.from || to-from != min(tc.n, tc.width) || (tc.cursor >= 0 && (tc.cursor < from || tc.cursor >= to)) {
			t.Errorf("%+v: window %d..%d", tc, from, to)
		}
	}
}

// TestHeatLegend: the strip's summary row names the heatmap's scale, each
// level's range beside a swatch, by probability or by surprisal, and a
// compact key where the full one does not fit.
func TestHeatLegend(t *testing.T) {
	st := asciiStyles()
	s := Surprisal{Bits: []float64{0.5, 3, 9}, Entropy: []float64{1, 2, 3}, Cursor: -1}
	wide := SurprisalLines(st, s, 120)[2]
	if !strings.Contains(wide, "heat p █<10% █<30% █<60% █<90% █≥90%") {
		t.Errorf("no probability legend in %q", wide)
	}
	s.BySurprisal = true
	if wide := SurprisalLines(st, s, 120)[2]; !strings.Contains(wide, "heat surprisal █≥8b █≥4b █≥2b █≥1b █<1b") {
		t.Errorf("no surprisal legend in %q", wide)
	}
	if narrow := SurprisalLines(st, s, 70)[2]; !strings.Contains(narrow, "heat surprisal █████ ≥8b…<1b") {
		t.Errorf("no compact legend in %q", narrow)
	}
}
