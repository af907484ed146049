package panels

import (
	"fmt"
	"math"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// layoutKV is the KV formula of a model whose layers differ in width or
// share caches (engine.ModelInfo.KVLayout): each group's layers ×
// positions × kv heads × head dim, summed, × 2 (K,V) × the element size;
// its terms, ending before the element size, and its total.
func layoutKV(info engine.ModelInfo, perElem float64) (terms []string, total int64) {
	var values int64
	for i, g := range info.KVLayout {
		what := fmt.Sprintf("%d ctx", g.Positions)
		if g.Window > 0 {
			what = fmt.Sprintf("%d window", g.Positions)
		}
		op := "+ "
		if i == 0 {
			op = "("
		}
		terms = append(terms, fmt.Sprintf("%s%d %s × %s", op, g.Layers, plural(g.Layers, "layer"), what),
			fmt.Sprintf("× %d kv × %d hd", g.KVHeads, g.HeadDim))
		values += int64(g.Layers) * int64(g.Positions) * int64(g.KVHeads) * int64(g.HeadDim)
	}
	terms[len(terms)-1] += ")"
	return append(terms, "× 2 (K,V)"), int64(math.Round(float64(values) * 2 * perElem))
}

// sharedRow names the layers that read an earlier layer's cache, as vkchat
// info does ("4→2" reads layer 2's), as a row of its own: it stays when
// the side column drops the formulas for room. The pairs that do not fit
// the row are counted.
func sharedRow(st theme.Styles, info engine.ModelInfo, width int) []string {
	if info.KVShared == 0 {
		return nil
	}
	head := fmt.Sprintf("%d %s, no cache", info.KVShared, plural(info.KVShared, "layer"))
	room := width - memLabelW - 1
	list := ":"
	for i, p := range info.KVSharing {
		next := list + fmt.Sprintf(" %d→%d", p.Layer, p.Source)
		more := ""
		if i < len(info.KVSharing)-1 {
			more = " …"
		}
		if termtext.Width(head+next+more) > room {
			list += " …"
			break
		}
		list = next
	}
	value := st.Value.Render(head)
	if list != ":" && list != ": …" {
		value += st.Dim.Render(list)
	}
	return []string{row(st, "KV shared", memLabelW, value)}
}

// sharedNote says what the KV-shared layers cost: nothing of their own.
func sharedNote(info engine.ModelInfo) []string {
	if info.KVShared == 0 {
		return nil
	}
	return []string{fmt.Sprintf("+ %d KV-shared %s: no cache", info.KVShared, plural(info.KVShared, "layer"))}
}

// pleLines are the per-layer embedding table's row and formula: tokens ×
// one token's row (layers × width values) = its size, kept in the mapped
// file on the host.
func pleLines(st theme.Styles, info engine.ModelInfo, width int, formula bool) []string {
	p := info.PLE
	if p.Tokens == 0 {
		return nil
	}
	lines := []string{row(st, "PLE", memLabelW, sizeCell(st, p.Bytes()))}
	if !formula {
		return lines
	}
	terms := []string{
		fmt.Sprintf("%d tokens", p.Tokens),
		fmt.Sprintf("× (%d layers × %d %s", p.Layers, p.Width, termtext.Sanitize(p.Type)),
		"= " + ExactBytes(p.RowBytes) + "/row)",
		"= " + ExactBytes(p.Bytes()),
		"mapped on the host, one row per token",
	}
	return append(lines, inlineFormula(st, "PLE =", terms, width)...)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
