package panels

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Router is what the router panel shows: where each layer of a
// mixture-of-experts model sent one token (engine.TokenInfo.Experts).
type Router struct {
	Title string // whose routing: "step 7", "inspecting step 3/14"
	// Experts is the routed experts per layer (engine.ModelInfo.Experts);
	// 0 when unknown: the largest expert id seen + 1.
	Experts int
	Layers  []engine.Routing
	// Empty is what the panel says when Layers is nil.
	Empty string
	// Gating is the routing rule in words (engine.ModelInfo.Gating),
	// shown above the layers when the rows allow; "" shows nothing.
	Gating string
}

// expertCount is the grid's width: Experts, or what the data implies.
func expertCount(declared int, layers [][]int32) int {
	n := declared
	for _, l := range layers {
		for _, e := range l {
			n = max(n, int(e)+1)
		}
	}
	return n
}

// layerLabel is "L7" padded to the widest label of n layers.
func layerLabel(i, n int) string {
	return fmt.Sprintf("L%-*d", len(strconv.Itoa(max(n-1, 0))), i)
}

// weightText is a routing weight, always to two places so the weights
// of a row read alike: ".62", "1.00"; a chosen expert's weight too small
// to show is "<.01", not ".00".
func weightText(w float32) string {
	if w > 0 && w < 0.005 {
		return "<.01"
	}
	return strings.TrimPrefix(fmt.Sprintf("%.2f", max(w, 0)), "0")
}

// levelCell is the block of height v (0..1]; 0 or less is "·".
func levelCell(v float64) string {
	if !(v > 0) {
		return "·"
	}
	i := int(math.Ceil(v * float64(len(stripLevels)-1)))
	return string(stripLevels[min(max(i, 1), len(stripLevels)-1)])
}

// expertRuler labels the columns of a grid of n experts, one cell each:
// every id when they are single digits, else every eighth.
func expertRuler(n int) string {
	if n <= 10 {
		var b strings.Builder
		for i := range n {
			b.WriteString(strconv.Itoa(i))
		}
		return b.String()
	}
	r := []rune(strings.Repeat(" ", n))
	for i := 0; i < n; i += 8 {
		s := strconv.Itoa(i)
		if i+len(s) <= n {
			copy(r[i:], []rune(s))
		}
	}
	return strings.TrimRight(string(r), " ")
}

// columns lays the layer rows out in rows rows: as they are when they fit,
// else side by side in as many columns as they need when those fit in
// width (L0 and L1 in the first, …), else the first ones and a count.
func columns(st theme.Styles, lines []string, rows, width int) []string {
	if len(lines) <= rows || rows <= 0 {
		return fitLayers(st, lines, rows)
	}
	colW := 0
	for _, l := range lines {
		colW = max(colW, termtext.Width(strings.TrimRight(l, " ")))
	}
	const gap = 3
	n := (len(lines) + rows - 1) / rows
	if n*colW+(n-1)*gap > width {
		return fitLayers(st, lines, rows)
	}
	out := make([]string, rows)
	for i, l := range lines {
		r := i % rows
		if i >= rows {
			out[r] += strings.Repeat(" ", gap)
		}
		if i+rows < len(lines) {
			l = termtext.Fit(strings.TrimRight(l, " "), colW)
		}
		out[r] += l
	}
	return out
}

// fitLayers keeps the rows that fit in rows: the first layers, then a row
// saying how many more there are.
func fitLayers(st theme.Styles, lines []string, rows int) []string {
	if len(lines) <= rows || rows <= 0 {
		return lines[:min(len(lines), max(rows, 0))]
	}
	keep := rows - 1
	return append(lines[:keep:keep], st.Dim.Render("… "+counted(len(lines)-keep, "more layer")))
}

// RouterTitle is the router panel's heading: whose routing, and k of E
// experts per layer.
func RouterTitle(r Router) string {
	if len(r.Layers) == 0 {
		return r.Title
	}
	k := 0
	for _, l := range r.Layers {
		k = max(k, len(l.Experts))
	}
	return fmt.Sprintf("%s · %d of %d experts", r.Title, k, expertCount(r.Experts, routedIDs(r.Layers)))
}

func routedIDs(layers []engine.Routing) [][]int32 {
	ids := make([][]int32, len(layers))
	for i, l := range layers {
		ids[i] = l.Experts
	}
	return ids
}

// RouterLines renders the router panel body (RouterTitle is its heading)
// in at most rows rows of width cells, one row per layer. When a cell per
// expert fits, a layer's row is the full grid (· an expert not chosen, a
// block as tall as a chosen one's weight) followed by the chosen experts
// as "#id weight", most weight first, under a ruler of expert ids when
// the rows allow it; otherwise it lists only the chosen experts. Layers
// that do not fit are counted in a last row.
func RouterLines(st theme.Styles, r Router, width, rows int) []string {
	if len(r.Layers) == 0 {
		return termtext.FitLines([]string{st.Dim.Render(r.Empty)}, width, min(rows, 1))
	}
	e := expertCount(r.Experts, routedIDs(r.Layers))
	labelW := len(layerLabel(0, len(r.Layers)))
	grid := labelW+1+e <= width
	var out []string
	if r.Gating != "" {
		// the rule the weights come from (and what scales the experts'
		// outputs after them), whole, where rows are spare beside every
		// layer's and the ruler's
		g := flow(splitLong(strings.Fields(termtext.Sanitize(r.Gating)), width), " ", width)
		if len(g) <= rows-len(r.Layers)-1 {
			for _, l := range g {
				out = append(out, st.Dim.Render(l))
			}
		}
	}
	if grid && rows > len(r.Layers)+len(out) {
		out = append(out, strings.Repeat(" ", labelW+1)+st.Dim.Render(expertRuler(e)))
	}
	var layers []string
	for i, l := range r.Layers {
		var b strings.Builder
		b.WriteString(st.Label.Render(layerLabel(i, len(r.Layers))) + " ")
		if grid {
			cells := make([]string, e)
			for j := range cells {
				cells[j] = st.Dim.Render("·")
			}
			for j, x := range l.Experts {
				if int(x) >= 0 && int(x) < e && j < len(l.Weights) {
					cells[x] = st.Heat[theme.HeatLevel(l.Weights[j])].Render(levelCell(float64(l.Weights[j])))
				}
			}
			b.WriteString(strings.Join(cells, "") + " ")
		}
		if len(l.Experts) == 0 && termtext.Width(b.String())+len("no experts") <= width {
			b.WriteString(st.Dim.Render("no experts")) // a dense layer of a MoE model
		}
		for j, x := range l.Experts {
			if j >= len(l.Weights) {
				break
			}
			item := fmt.Sprintf("#%d %s", x, weightText(l.Weights[j]))
			if termtext.Width(b.String())+1+len(item) > width {
				b.WriteString(st.Dim.Render("…"))
				break
			}
			if j > 0 {
				b.WriteString(" ")
			}
			style := st.Value
			if j == 0 {
				style = st.Sampled
			}
			b.WriteString(style.Render(item))
		}
		layers = append(layers, b.String())
	}
	out = append(out, columns(st, layers, rows-len(out), width)...)
	return termtext.FitLines(out, width, min(len(out), rows))
}

// ExpertUsage is how a reply's tokens used each layer's experts.
type ExpertUsage struct {
	Title  string
	Counts [][]int // [layer][expert]: tokens routed to the expert
	Tokens int     // tokens with routing
	Empty  string  // what the map says without any
}

// NewExpertUsage counts where the tokens of a reply were routed: routes
// holds each token's routing (nil for a token without), experts is
// ModelInfo.Experts (0: the largest id seen + 1).
func NewExpertUsage(title string, routes [][]engine.Routing, experts int) ExpertUsage {
	u := ExpertUsage{Title: title}
	var ids [][]int32
	layers := 0
	for _, r := range routes {
		layers = max(layers, len(r))
		for _, l := range r {
			ids = append(ids, l.Experts)
		}
	}
	e := expertCount(experts, ids)
	if layers == 0 {
		return u
	}
	u.Counts = make([][]int, layers)
	for i := range u.Counts {
		u.Counts[i] = make([]int, e)
	}
	for _, r := range routes {
		if len(r) > 0 {
			u.Tokens++
		}
		for i, l := range r {
			for _, x := range l.Experts {
				if x >= 0 && int(x) < e {
					u.Counts[i][x]++
				}
			}
		}
	}
	return u
}

// ExpertHeatLines renders the expert-usage map in at most rows rows of
// width cells: per layer a row of cells, one per expert (· never chosen,
// a block as tall as its count over the busiest expert's), or, when the
// experts outnumber the cells, one per group of experts showing its
// busiest; then the layer's busiest expert and its share of the tokens.
func ExpertHeatLines(st theme.Styles, u ExpertUsage, width, rows int) []string {
	if u.Tokens == 0 || len(u.Counts) == 0 {
		return termtext.FitLines([]string{st.Label.Render("experts "+u.Title+": ") + st.Dim.Render(u.Empty)}, width, min(rows, 1))
	}
	e := len(u.Counts[0])
	top := 0
	for _, l := range u.Counts {
		for _, c := range l {
			top = max(top, c)
		}
	}
	labelW := len(layerLabel(0, len(u.Counts)))
	busiestW := len(fmt.Sprintf(" #%d 100.0%%", e-1))
	cellsW := max(width-labelW-1-busiestW, 1)
	group := (e + cellsW - 1) / cellsW
	cols := (e + group - 1) / group
	scale := fmt.Sprintf("█ = %d of %d tokens", top, u.Tokens)
	if group > 1 {
		scale += fmt.Sprintf(" · a cell: busiest of %d", group)
	}
	out := []string{st.Label.Render("experts · "+u.Title+" · ") + st.Value.Render(scale)}
	ruler := expertRuler(e)
	if group > 1 {
		ruler = groupRuler(cols, group)
	}
	out = append(out, strings.Repeat(" ", labelW+1)+st.Dim.Render(ruler))
	var layers []string
	for i, l := range u.Counts {
		var b strings.Builder
		b.WriteString(st.Label.Render(layerLabel(i, len(u.Counts))) + " ")
		best := 0
		for x, c := range l {
			if c > l[best] {
				best = x
			}
		}
		for c := range cols {
			v := 0
			for x := c * group; x < min((c+1)*group, e); x++ {
				v = max(v, l[x])
			}
			cell := levelCell(float64(v) / float64(top))
			b.WriteString(st.Heat[theme.HeatLevel(float32(v)/float32(top))].Render(cell))
		}
		share := float32(l[best]) / float32(u.Tokens)
		b.WriteString(st.Label.Render(fmt.Sprintf(" #%d ", best)) + st.Value.Render(Percent(share)))
		layers = append(layers, b.String())
	}
	out = append(out, fitLayers(st, layers, rows-len(out))...)
	return termtext.FitLines(out, width, min(len(out), rows))
}

// groupRuler labels the columns of a grid whose cells hold group experts
// each: the first expert of every eighth cell.
func groupRuler(cols, group int) string {
	r := []rune(strings.Repeat(" ", cols))
	for c := 0; c < cols; c += 8 {
		s := strconv.Itoa(c * group)
		if c+len(s) <= cols {
			copy(r[c:], []rune(s))
		}
	}
	return strings.TrimRight(string(r), " ")
}
