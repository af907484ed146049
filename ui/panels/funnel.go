package panels

import (
	"fmt"
	"strings"

	"vkchat/runtime/sample"
	"vkchat/ui/theme"
)

// stageLabel is a stage with its setting, e.g. "top-p 0.95".
func stageLabel(f sample.FunnelStage, p sample.Params) string {
	switch f.Stage {
	case sample.StagePenalties:
		if p.RepeatPenalty == 1 && p.PresencePenalty == 0 && p.FrequencyPenalty == 0 {
			return "penalties off"
		}
		return fmt.Sprintf("repeat %.2f", p.RepeatPenalty)
	case sample.StageTopK:
		if p.TopK <= 0 {
			return "top-k off"
		}
		return fmt.Sprintf("top-k %d", p.TopK)
	case sample.StageTopP:
		if !(p.TopP > 0 && p.TopP < 1) {
			return "top-p off"
		}
		return fmt.Sprintf("top-p %.2f", p.TopP)
	case sample.StageMinP:
		if p.MinP <= 0 {
			return "min-p off"
		}
		return fmt.Sprintf("min-p %.2f", p.MinP)
	case sample.StageTemperature:
		if p.Temperature <= 0 {
			return "temp 0 (greedy)"
		}
		return fmt.Sprintf("temp %.2f", p.Temperature)
	case sample.StageForced:
		return "forced (fork)"
	case sample.StageDraw:
		return "draw"
	}
	return f.Stage.String()
}

// leftText is a survivor count, "≥N" when the chain did not count further.
func leftText(f sample.FunnelStage) string {
	if !f.Exact {
		return "≥" + Grouped(int64(f.Left))
	}
	return Grouped(int64(f.Left))
}

// FunnelLines renders the sampler funnel: one row per stage of the chain,
// in order, with how many candidates were left after it and the
// probability mass they held, as a bar. Stages whose setting is off are
// dimmed; the draw row shows the chosen token's share of the mass.
func FunnelLines(st theme.Styles, f sample.Funnel, p sample.Params, changed string, width int) []string {
	if f[0].Stage == sample.StageNone {
		return []string{st.Dim.Render("no step yet")}
	}
	const labelW = 15
	numW := 7 + 1 + 6 // "≥32,000" + mass
	barW := max(width-labelW-1-numW-1, 0)
	var out []string
	for _, s := range f {
		label := stageLabel(s, p)
		if s.Stage == sample.StagePenalties && s.Penalized > 0 {
			label = fmt.Sprintf("%s (%d)", label, s.Penalized)
		}
		nums := fmt.Sprintf("%7s %6s", leftText(s), Percent(float32(s.Mass)))
		style := st.Value
		if !s.Active {
			style = st.Dim
		}
		if changed != "" && strings.HasPrefix(label, changed) {
			style = st.Sampled
		}
		line := style.Render(fitRight(label, labelW)) + " "
		if barW > 0 {
			line += Bar(st, s.Mass, barW) + " "
		}
		out = append(out, line+style.Render(nums))
	}
	return out
}

// FunnelLine is the funnel in one row for the compact status bar:
// "funnel 32,000 →k 40 97% →p 12 95% →min-p 8 93% →● 61%".
func FunnelLine(st theme.Styles, f sample.Funnel) string {
	if f[0].Stage == sample.StageNone {
		return st.Label.Render("funnel ") + st.Dim.Render("—")
	}
	short := map[sample.Stage]string{sample.StageTopK: "k", sample.StageTopP: "p", sample.StageMinP: "min-p"}
	line := st.Label.Render("funnel ") + st.Value.Render(leftText(f[0]))
	for _, s := range f[1:4] {
		if !s.Active {
			continue
		}
		line += st.Label.Render(" →"+short[s.Stage]+" ") + st.Value.Render(leftText(s)+" "+Percent(float32(s.Mass)))
	}
	return line + st.Label.Render(" →") + st.Sampled.Render("● "+Percent(float32(f[5].Mass)))
}

// fitRight pads or cuts s to w cells, keeping its start.
func fitRight(s string, w int) string {
	r := []rune(s)
	if len(r) > w {
		return string(r[:w])
	}
	return s + strings.Repeat(" ", w-len(r))
}
