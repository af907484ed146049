package panels

import (
	"math"
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
// Non-positive and NaN values are drawn at the lowest level.
func Sparkline(values []float64, width int) string {
	if width <= 0 || len(values) == 0 {
		return ""
	}
	if len(values) > width {
		values = values[len(values)-width:]
	}
	hi := 0.0
	for _, v := range values {
		if v > hi && !math.IsInf(v, 1) {
			hi = v
		}
	}
	var b strings.Builder
	for _, v := range values {
		lvl := 0
		if hi > 0 && v > 0 && !math.IsNaN(v) {
			if math.IsInf(v, 1) {
				v = hi
			}
			lvl = int(math.Round(v / hi * float64(len(sparkLevels)-1)))
			lvl = max(0, min(lvl, len(sparkLevels)-1))
		}
		b.WriteRune(sparkLevels[lvl])
	}
	return b.String()
}
