package panels

import (
	"fmt"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// stateLines are a hybrid model's rows of the memory panel: its layers'
// kinds (counted, then one letter per layer), the recurrent state (a fixed
// size, whatever the context, unlike the KV cache of its attention
// layers), the checkpoints the backend keeps of it, and how the state adds
// up.
func stateLines(st theme.Styles, info engine.ModelInfo, s engine.Stats, width int, formula bool) []string {
	counts, layerMap := kindSummary(info.LayerKinds)
	lines := []string{row(st, "layers", memLabelW, st.Value.Render(termtext.Sanitize(counts)))}
	for _, r := range chunk(termtext.Sanitize(layerMap), max(width-2, 1)) {
		lines = append(lines, "  "+st.Dim.Render(r))
	}
	lines = append(lines, row(st, "state", memLabelW, sizeCell(st, s.StateBytes)))
	ckpt := sizeCell(st, s.CheckpointBytes)
	if n := len(s.Checkpoints); n > 0 {
		ckpt += st.Dim.Render(fmt.Sprintf(" ×%d", n))
	}
	lines = append(lines, row(st, "ckpts", memLabelW, ckpt))
	if s.StateFormula != "" && formula {
		lines = append(lines, inlineFormula(st, "state =", formulaTerms(s.StateFormula), width)...)
	}
	return lines
}

// kindSummary counts the layers of each kind ("4 shortconv + 2
// attention", in order of first appearance) and maps them one letter a
// layer: A for attention, the kind's initial otherwise ("ssAssA").
func kindSummary(kinds []string) (counts, layerMap string) {
	var order []string
	n := map[string]int{}
	var m strings.Builder
	for _, k := range kinds {
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
		switch {
		case k == "attention":
			m.WriteByte('A')
		case k != "":
			m.WriteString(strings.ToLower(k[:1]))
		}
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, " + "), m.String()
}

// chunk cuts s into rows of at most w bytes (s is ASCII).
func chunk(s string, w int) []string {
	var out []string
	for len(s) > w {
		out = append(out, s[:w])
		s = s[w:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
