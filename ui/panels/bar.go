package panels

import (
	"math"
	"slices"
	"strings"

	"vkchat/ui/theme"
)

// eighths are the partial blocks that give a bar 1/8-cell resolution.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Bar draws frac (0..1) as a horizontal bar width cells wide, the filled
// part in full and partial blocks and the rest as a light track.
func Bar(st theme.Styles, frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	units := int(math.Round(frac * float64(width*8)))
	full, part := units/8, units%8
	fill := strings.Repeat("█", full) + eighths[part]
	used := full
	if part > 0 {
		used++
	}
	out := st.BarFill.Render(fill)
	if rest := width - used; rest > 0 {
		out += st.BarEmpty.Render(strings.Repeat("░", rest))
	}
	return out
}

// sparkLevels are the block heights a sparkline is drawn with.
var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values as block heights scaled from 0 to
// the largest value shown, so equal speeds look equal whatever came before.
// The scale is capped at three times the median: a single outlier (a token
// that skipped its forward pass, a stall) is drawn full height instead of
// flattening every other bar. Non-positive and NaN values sit at the bottom.
func Sparkline(values []float64, width int) string {
	if width <= 0 || len(values) == 0 {
		return ""
	}
	if len(values) > width {
		values = values[len(values)-width:]
	}
	var finite []float64
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	hi := 0.0
	for _, v := range finite {
		hi = max(hi, v)
	}
	if len(finite) > 0 {
		sorted := slices.Clone(finite)
		slices.Sort(sorted)
		hi = min(hi, 3*sorted[len(sorted)/2])
	}
	var b strings.Builder
	for _, v := range values {
		lvl := 0
		switch {
		case math.IsNaN(v) || v <= 0 || hi <= 0:
		case v >= hi:
			lvl = len(sparkLevels) - 1
		default:
			lvl = int(math.Round(v / hi * float64(len(sparkLevels)-1)))
		}
		b.WriteRune(sparkLevels[lvl])
	}
	return b.String()
}
