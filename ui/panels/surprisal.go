package panels

import (
	"fmt"
	"math"
	"strings"

	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Surprisal is one reply's per-token information, in bits.
type Surprisal struct {
	Bits    []float64 // −log₂ p of each chosen token, in reply order
	Entropy []float64 // of each step's distribution, bits
	Cursor  int       // the inspected token, -1 for none
	// BySurprisal says the heatmap colours by surprisal (else probability).
	BySurprisal bool
}

// Mean is the mean surprisal in bits per token.
func (s Surprisal) Mean() float64 {
	if len(s.Bits) == 0 {
		return 0
	}
	sum := 0.0
	for _, b := range s.Bits {
		sum += b
	}
	return sum / float64(len(s.Bits))
}

// Perplexity is 2^mean surprisal: the number of equally likely choices
// that would surprise as much on average.
func (s Surprisal) Perplexity() float64 { return math.Exp2(s.Mean()) }

// stripLevels are the eight block heights of a strip cell.
var stripLevels = []rune(" ▁▂▃▄▅▆▇█")

// stripCell draws v on a fixed scale of 0..top bits, so strips of different
// replies compare by eye (a sparkline would rescale each one).
func stripCell(v, top float64) rune {
	if !(v > 0) {
		return stripLevels[0]
	}
	i := int(math.Ceil(v / top * float64(len(stripLevels)-1)))
	return stripLevels[min(max(i, 1), len(stripLevels)-1)]
}

// stripTop is the scale of the strip: 8 bits (p = 1/256) fills a cell.
const stripTop = 8.0

// stripWindow picks which tokens fit in width cells: the latest ones, or a
// window that keeps the cursor in view.
func stripWindow(n, cursor, width int) (from, to int) {
	if n <= width {
		return 0, n
	}
	from = n - width
	if cursor >= 0 && cursor < from {
		from = max(cursor-width/2, 0)
	}
	return from, from + width
}

// SurprisalLines renders the strip: one cell per token of the reply, so
// column i is token i — surprisal on the first row, the entropy of the
// distribution it was drawn from on the second, and a summary row with the
// inspected token's figures, the mean surprisal and the perplexity.
func SurprisalLines(st theme.Styles, s Surprisal, width int) []string {
	const labelW = 10
	stripW := max(width-labelW-1, 0)
	if len(s.Bits) == 0 {
		return []string{row(st, "surprisal", labelW, st.Dim.Render("— (no reply generated here yet)"))}
	}
	from, to := stripWindow(len(s.Bits), s.Cursor, stripW)
	var sb, eb strings.Builder
	for i := from; i < to; i++ {
		cs, ce := string(stripCell(s.Bits[i], stripTop)), string(stripCell(s.Entropy[i], stripTop))
		if i == s.Cursor {
			sb.WriteString(st.Selected.Render(cs))
			eb.WriteString(st.Selected.Render(ce))
			continue
		}
		sb.WriteString(st.Heat[theme.HeatLevel(float32(math.Exp2(-s.Bits[i])))].Render(cs))
		eb.WriteString(st.Spark.Render(ce))
	}
	sum := fmt.Sprintf("mean %.2f b/tok · ppl %.2f", s.Mean(), s.Perplexity())
	if c := s.Cursor; c >= 0 && c < len(s.Bits) {
		sum = fmt.Sprintf("#%d %.2f, H %.2f · ", c+1, s.Bits[c], s.Entropy[c]) + sum
	}
	sum = st.Value.Render(sum)
	for _, heat := range []string{HeatLegend(st, s.BySurprisal, false), HeatLegend(st, s.BySurprisal, true)} {
		if termtext.Width(sum)+3+termtext.Width(heat) <= stripW {
			sum += st.Dim.Render(" · ") + heat
			break
		}
	}
	return []string{
		row(st, "surprisal", labelW, sb.String()),
		row(st, "entropy", labelW, eb.String()),
		row(st, "bits", labelW, sum),
	}
}

// heatScales are the heatmap's colour levels, coolest last, by probability
// (theme.HeatLevel) and by surprisal (inspector.SurprisalLevel).
var heatScales = [2][theme.HeatLevels]string{
	{"<10%", "<30%", "<60%", "<90%", "≥90%"},
	{"≥8b", "≥4b", "≥2b", "≥1b", "<1b"},
}

// HeatLegend is the heatmap's key: a swatch in each level's colour and the
// range it stands for; compact gives only the two ends.
func HeatLegend(st theme.Styles, bySurprisal bool, compact bool) string {
	scale, name := heatScales[0], "heat p "
	if bySurprisal {
		scale, name = heatScales[1], "heat surprisal "
	}
	var b strings.Builder
	b.WriteString(st.Label.Render(name))
	for i, r := range scale {
		if !compact {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(st.Heat[i].Render("█") + st.Value.Render(r))
			continue
		}
		b.WriteString(st.Heat[i].Render("█"))
	}
	if compact {
		b.WriteString(" " + st.Value.Render(scale[0]+"…"+scale[len(scale)-1]))
	}
	return b.String()
}
