package panels

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Memory is what the memory panel explains.
type Memory struct {
	Info  engine.ModelInfo
	Stats engine.Stats
}

// kvElementBytes is the storage per cached value for the KV types an engine
// may use; quantized types store a block of 32 values with its scale.
var kvElementBytes = map[string]float64{
	"f32":  4,
	"f16":  2,
	"bf16": 2,
	"q8_0": 34.0 / 32,
	"q4_0": 18.0 / 32,
	"q4_1": 20.0 / 32,
	"q5_0": 22.0 / 32,
	"q5_1": 24.0 / 32,

	"iq4_nl": 18.0 / 32,
}

// KVFormula is the KV cache size the model's shape implies: layers (a
// hybrid model's attention layers: its recurrent ones keep no KV cache) ×
// context × KV heads × head dim × 2 (K and V) × bytes per element, or for
// latent attention (MLA) × the one cached row of latent + rope. ok is
// false when the element type is unknown.
func KVFormula(info engine.ModelInfo, ctx int) (total int64, perElem float64, ok bool) {
	perElem, ok = kvElementBytes[strings.ToLower(info.KVType)]
	if k, v, pair := strings.Cut(strings.ToLower(info.KVType), "/"); pair {
		// keys and values of their own types: a value of each per
		// position and head dim, so the mean of the two per element
		pk, okK := kvElementBytes[k]
		pv, okV := kvElementBytes[v]
		perElem, ok = (pk+pv)/2, okK && okV
	}
	if !ok {
		return 0, 0, false
	}
	row := float64(info.KVHeads) * float64(info.HeadDim) * 2
	if a := info.MLA; a != nil {
		row = float64(a.Latent + a.Rope) // one row, read as keys and values
	}
	n := float64(info.AttentionLayers()) * float64(ctx) * row * perElem
	return int64(math.Round(n)), perElem, true
}

const memLabelW = 9

// bareBytes is a byte count as the engine's formulas write it: digits
// without separators, then " B" ending the word.
var bareBytes = regexp.MustCompile(`\b\d+ B\b`)

func sizeCell(st theme.Styles, n int64) string {
	return st.Value.Render(fmt.Sprintf("%-9s", Bytes(n))) + " " + st.Dim.Render(ExactBytes(n))
}

// MemoryDetail is how much of its working out the memory panel shows:
// the side column gives up the formulas before an optional panel it has
// room for (the router of a mixture-of-experts model).
type MemoryDetail int

const (
	// MemoryFull shows every allocation and every formula.
	MemoryFull MemoryDetail = iota
	// MemoryKV keeps the KV cache's formula only (the one a new user
	// checks against --ctx); the weights' and tables' formulas go.
	MemoryKV
	// MemoryRows is the allocations alone, one row each.
	MemoryRows
)

// MemoryLines renders the memory panel body: each allocation in readable
// and exact bytes, and the KV cache size worked out from the model shape.
func MemoryLines(st theme.Styles, m Memory, width int) []string {
	return MemoryLinesDetail(st, m, width, MemoryFull)
}

// MemoryLinesDetail is MemoryLines with only the formulas detail keeps.
func MemoryLinesDetail(st theme.Styles, m Memory, width int, detail MemoryDetail) []string {
	s, info := m.Stats, m.Info
	ctx := s.ContextSize
	if ctx <= 0 {
		ctx = info.ContextSize
	}
	lines := []string{row(st, "weights", memLabelW, sizeCell(st, s.Weights))}
	moe := s.ActiveFormula != ""
	if moe {
		lines = append(lines, row(st, "active", memLabelW, sizeCell(st, s.WeightsActive)))
	}
	lines = append(lines,
		row(st, "KV used", memLabelW, sizeCell(st, s.KVUsed)),
		row(st, "KV alloc", memLabelW, sizeCell(st, s.KVAllocated)),
		row(st, "KV/token", memLabelW, sizeCell(st, s.KVPerToken)),
		row(st, "scratch", memLabelW, sizeCell(st, s.Scratch)),
	)
	hybrid := s.StateBytes > 0
	if hybrid {
		lines = append(lines, stateLines(st, info, s, width, detail == MemoryFull)...)
	}
	lines = append(lines, pleLines(st, info, width, detail == MemoryFull)...)
	lines = append(lines, sharedRow(st, info, width)...)
	if detail == MemoryRows {
		return lines
	}
	if moe && detail == MemoryFull {
		// Three formulas: each starts on its label's row to keep the
		// panel short enough to stay beside the router panel.
		lines = append(lines, inlineFormula(st, "weights =", diskTerms(info, s), width)...)
		lines = append(lines, inlineFormula(st, "active =", formulaTerms(s.ActiveFormula), width)...)
	}
	elem := "?"
	total, perElem, ok := KVFormula(info, ctx)
	if ok && len(s.KVWindows) > 0 {
		total = windowedKV(info, ctx, s.KVWindows, perElem)
	}
	if ok {
		elem = strconv.FormatFloat(perElem, 'f', -1, 64)
	}
	kvType := info.KVType
	if kvType == "" {
		kvType = "?"
	}
	layers := counted(info.Layers, "layer")
	if info.RecurrentLayers > 0 {
		layers = counted(info.AttentionLayers(), "attention layer")
	}
	terms := []string{layers, fmt.Sprintf("× %d ctx", ctx)}
	if len(s.KVWindows) > 0 {
		terms = windowTerms(info, ctx, s.KVWindows)
	}
	var mha []string
	if a := info.MLA; a != nil {
		// one row of latent and RoPE key a position, read as the values
		// too; beside it, what plain multi-head attention would hold
		n := info.AttentionLayers()
		terms = append(terms, fmt.Sprintf("× (%d latent + %d rope)", a.Latent, a.Rope), "(K only: V = the latent)")
		mhaBytes := int64(math.Round(float64(n) * float64(ctx) * float64(a.Heads*(a.Key+a.Value)) * perElem))
		mha = []string{counted(n, "layer"), fmt.Sprintf("× %d ctx", ctx), fmt.Sprintf("× %d heads", a.Heads),
			fmt.Sprintf("× (%d K + %d V)", a.Key, a.Value), fmt.Sprintf("× %s B", strconv.FormatFloat(perElem, 'f', -1, 64)),
			"= " + ExactBytes(mhaBytes)}
	} else if len(info.KVLayout) > 0 {
		// layers differ in width or share caches: each group's own
		var t int64
		terms, t = layoutKV(info, perElem)
		if ok {
			total = t
		}
	} else {
		terms = append(terms,
			fmt.Sprintf("× %d kv heads", info.KVHeads),
			fmt.Sprintf("× %d head dim", info.HeadDim),
			"× 2 (K,V)")
	}
	terms = append(terms, fmt.Sprintf("× %s B %s", elem, termtext.Sanitize(kvType)))
	if ok {
		res := "= " + ExactBytes(total)
		switch {
		case s.KVAllocated == 0:
		case total == s.KVAllocated:
			res += " ✓"
		default:
			res += " ≠ allocated"
		}
		terms = append(terms, res)
	}
	terms = append(terms, sharedNote(info)...)
	if moe || hybrid {
		lines = append(lines, inlineFormula(st, "KV alloc =", terms, width)...)
	} else {
		lines = append(lines, formulaLines(st, "KV alloc =", terms, width)...)
	}
	if mha != nil && ok {
		lines = append(lines, inlineFormula(st, "as MHA =", mha, width)...)
	}
	if ok && strings.ToLower(info.KVType) != "f16" {
		// what a quantized (or f32) cache saves is the reason to pick it
		f16 := int64(math.Round(float64(total) * 2 / perElem))
		lines = append(lines, row(st, "in f16", memLabelW, sizeCell(st, f16)))
	}
	return lines
}

// inlineFormula flows a label and its formula's terms on as few rows as
// width allows, the rows after the first indented; a term wider than a
// row is split into its words.
func inlineFormula(st theme.Styles, label string, terms []string, width int) []string {
	rows := flow(append([]string{label}, splitLong(terms, width-2)...), " ", max(width-2, 1))
	if len(rows) == 0 {
		return nil
	}
	first := rows[0]
	out := []string{st.Label.Render(label) + st.Value.Render(strings.TrimPrefix(first, label))}
	for _, r := range rows[1:] {
		out = append(out, "  "+st.Value.Render(r))
	}
	return out
}

// formulaLines is a label and the terms of its formula flowed under it.
func formulaLines(st theme.Styles, label string, terms []string, width int) []string {
	lines := []string{st.Label.Render(label)}
	for _, l := range flow(terms, " ", max(width-2, 1)) {
		lines = append(lines, "  "+st.Value.Render(l))
	}
	return lines
}

// formulaTerms splits a one-line formula ("2 layers × 2 of 8 experts × 3 B
// + 5 B of … = 11 B") before each operator, so it flows at any width. The
// engine writes byte counts bare; they are grouped here as every other
// byte count in the panel is ("196,608 B", not "196608 B").
func formulaTerms(f string) []string {
	f = bareBytes.ReplaceAllStringFunc(termtext.Sanitize(f), func(b string) string {
		n, err := strconv.ParseInt(strings.TrimSuffix(b, " B"), 10, 64)
		if err != nil {
			return b // too long for an int64: left as written
		}
		return ExactBytes(n)
	})
	for _, op := range []string{" × ", " + ", " = "} {
		f = strings.ReplaceAll(f, op, "\x00"+op[1:])
	}
	return strings.Split(f, "\x00")
}

// splitLong breaks the terms wider than width into their words, so flow
// wraps them instead of the panel cutting them off.
func splitLong(terms []string, width int) []string {
	var out []string
	for _, t := range terms {
		if termtext.Width(t) <= width {
			out = append(out, t)
			continue
		}
		out = append(out, strings.Fields(t)...)
	}
	return out
}

// diskTerms is what a mixture-of-experts model holds beyond what one token
// reads: the experts it is not routed to. With the expert counts known and
// every expert the same size, that is layers × (E − k) × one expert's
// bytes; otherwise the difference in bytes.
func diskTerms(info engine.ModelInfo, s engine.Stats) []string {
	rest := s.Weights - s.WeightsActive
	terms := []string{"active"}
	if unused := int64(info.Layers) * int64(info.Experts-info.ExpertsUsed); unused > 0 && rest%unused == 0 {
		terms = append(terms, "+ "+counted(info.Layers, "layer"), "× "+counted(info.Experts-info.ExpertsUsed, "unrouted expert"),
			"× "+ExactBytes(rest/unused))
	} else {
		terms = append(terms, "+ "+ExactBytes(rest)+" of unrouted experts")
	}
	return append(terms, "= "+ExactBytes(s.Weights))
}

// windowedKV is KVFormula when sliding-window layers hold only their
// window: (full layers × ctx + Σ window layers × window) × the rest.
func windowedKV(info engine.ModelInfo, ctx int, ws []engine.KVWindow, perElem float64) int64 {
	pos := 0
	full := info.AttentionLayers()
	for _, w := range ws {
		pos += w.Layers * w.Window
		full -= w.Layers
	}
	pos += full * ctx
	return int64(math.Round(float64(pos) * float64(info.KVHeads) * float64(info.HeadDim) * 2 * perElem))
}

// windowTerms are the formula's position terms with sliding-window layers:
// "(1 layer × 4096 ctx", "+ 5 layers × 512 window)".
func windowTerms(info engine.ModelInfo, ctx int, ws []engine.KVWindow) []string {
	full := info.AttentionLayers()
	for _, w := range ws {
		full -= w.Layers
	}
	terms := []string{fmt.Sprintf("(%s × %d ctx", counted(full, "layer"), ctx)}
	for _, w := range ws {
		terms = append(terms, fmt.Sprintf("+ %s × %d window", counted(w.Layers, "layer"), w.Window))
	}
	terms[len(terms)-1] += ")"
	return terms
}

// counted is "1 layer", "2 layers": n and the noun, plural unless n is 1.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
