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
func pleLines(st theme.Styles, info engine.ModelInfo, width int) []string {
	p := info.PLE
	if p.Tokens == 0 {
		return nil
	}
	lines := []string{row(st, "PLE", memLabelW, sizeCell(st, p.Bytes()))}
	terms := []string{
		fmt.Sprintf("%d tokens", p.Tokens),
		fmt.Sprintf("× (%d layers × %d %s", p.Layers, p.Width, termtext.Sanitize(p.Type)),
		fmt.Sprintf("= %d B/row)", p.RowBytes),
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
