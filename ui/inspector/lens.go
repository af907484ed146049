package inspector

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// LensK is how many candidates per layer the lens asks for: the reference
// files' top 10, and the rank up to which the inspected token is found.
const LensK = 10

// LensMsg delivers the lens of step Step of Turn, computed off the UI
// goroutine; Stamp is the LensStamp it was asked under, so an answer about
// a conversation or model that has since changed is dropped.
type LensMsg struct {
	Stamp string
	Turn  *conversation.Turn
	Step  int
	Pos   *engine.LensPosition
	Err   error
}

type lensKey struct {
	turn *conversation.Turn
	step int
}

type lensEntry struct {
	pos     *engine.LensPosition
	err     error
	pending bool
}

// lensState is the lens view's switch and the lenses computed so far. The
// cache is per position because each costs a forward pass over the
// position and a vocabulary-sized product per layer: moving back shows a
// computed one at once, and only what the user looked at is ever computed.
type lensState struct {
	on    bool
	stamp string
	cache map[lensKey]lensEntry
	// note says why the inspected position's lens was not asked for (a
	// reply being written); it is not cached, the next move asks again.
	note string
}

// LensOn reports whether the lens view is on.
func (in *Inspector) LensOn() bool { return in.lens.on }

// toggleLens switches the lens view; the text is for the status line.
func (in *Inspector) toggleLens() string {
	in.lens.on = !in.lens.on
	if in.lens.on {
		return "lens: each layer's guess at this token (final norm + head) · l closes"
	}
	return "lens off"
}

// entry is the cached lens of step k of t under stamp.
func (in *Inspector) entry(t *conversation.Turn, k int, stamp string) (lensEntry, bool) {
	if in.lens.stamp != stamp {
		return lensEntry{}, false
	}
	e, ok := in.lens.cache[lensKey{t, k}]
	return e, ok
}

// lensCmd asks the host for the inspected position's lens unless it is
// computed or on its way.
func (in *Inspector) lensCmd(h Host) tea.Cmd {
	in.lens.note = ""
	if in.turn == nil || in.step < 0 || in.step >= len(in.turn.Steps) {
		return nil
	}
	stamp := h.LensStamp()
	if stamp != in.lens.stamp || in.lens.cache == nil {
		// The conversation, the model or its backend changed: what was
		// computed belongs to another chat or another model.
		in.lens.stamp, in.lens.cache = stamp, map[lensKey]lensEntry{}
	}
	key := lensKey{in.turn, in.step}
	if _, ok := in.lens.cache[key]; ok {
		return nil
	}
	cmd, err := h.Lens(in.turn, in.step, stamp)
	if err != nil {
		in.lens.note = err.Error()
		return nil
	}
	in.lens.cache[key] = lensEntry{pending: true}
	return cmd
}

// Lenses are the lenses of reply t's tokens computed under stamp, by the
// token's index (an empty map where none is; nil unless want), for
// /export --lens.
func (in *Inspector) Lenses(t *conversation.Turn, want bool, stamp string) map[int]*engine.LensPosition {
	if !want {
		return nil
	}
	out := map[int]*engine.LensPosition{}
	if in.lens.stamp != stamp {
		return out
	}
	for key, e := range in.lens.cache {
		if key.turn == t && e.pos != nil {
			out[key.step] = e.pos
		}
	}
	return out
}

// SetLens keeps a computed lens.
func (in *Inspector) SetLens(msg LensMsg) {
	if msg.Stamp != in.lens.stamp || in.lens.cache == nil {
		return
	}
	in.lens.cache[lensKey{msg.Turn, msg.Step}] = lensEntry{pos: msg.Pos, err: msg.Err}
}

// LensView is the lens view in at most rows rows of width cells: a title
// with where the final top-1 settled, the strip of settle layers over the
// inspected reply, and a row per layer with the inspected token's rank and
// probability and that layer's top candidates. text gives a token's piece.
func (in *Inspector) LensView(st theme.Styles, text func(int32) string, stamp string, rows, width int) []string {
	t, k := in.turn, in.step
	if rows < 1 || width < 1 || t == nil || k < 0 || k >= len(t.Steps) {
		return nil
	}
	chosen := t.Steps[k].ID
	title := st.Label.Render(fmt.Sprintf("lens · step %d/%d ", k+1, len(t.Steps))) + st.Value.Render(quoted(text(chosen)))
	e, ok := in.entry(t, k, stamp)
	var state string
	switch {
	case in.lens.note != "":
		state = st.Error.Render(in.lens.note)
	case !ok:
		state = st.Dim.Render("not computed yet")
	case e.pending:
		state = st.Dim.Render("computing the lens…")
	case e.err != nil:
		state = st.Error.Render(e.err.Error())
	case e.pos == nil || len(e.pos.Layers) == 0:
		state = st.Error.Render("the engine returned no layers")
	default:
		n := len(e.pos.Layers)
		final := e.pos.Top1ByLayer[n-1]
		state = st.Dim.Render(fmt.Sprintf("settles at layer %d of %d on ", e.pos.SettleLayer, n)) + st.Value.Render(quoted(text(final)))
	}
	out := []string{termtext.Truncate(title+st.Dim.Render(" · ")+state, width)}
	if rows >= 3 {
		out = append(out, in.lensStrip(st, stamp, width)...)
	}
	if !ok || e.pending || e.err != nil || e.pos == nil || len(e.pos.Layers) == 0 || in.lens.note != "" {
		return out
	}
	return append(out, lensTable(st, e.pos, chosen, text, rows-len(out), width)...)
}

// quoted is a piece as the panels show one: escaped, in quotes, cut short.
func quoted(piece string) string {
	return "\"" + termtext.Truncate(termtext.Visible(piece), 16) + "\""
}

// settleCell is a token's cell in the strip: its settle layer as a digit
// where a model has at most 10 layers, else as a block as tall as the
// layer is deep.
func settleCell(settle, layers int) string {
	if layers <= 10 {
		return fmt.Sprint(settle)
	}
	levels := []rune("▁▂▃▄▅▆▇█")
	return string(levels[min(settle*len(levels)/layers, len(levels)-1)])
}

// lensStrip is a cell per token of the inspected reply (the settle layer of
// those computed, · for the rest) and a caret under the inspected one. A
// reply wider than the strip shows the window around the cursor.
func (in *Inspector) lensStrip(st theme.Styles, stamp string, width int) []string {
	t := in.turn
	label := "settle "
	cells := max(width-len(label), 1)
	from := 0
	if n := len(t.Steps); n > cells {
		from = min(max(in.step-cells/2, 0), n-cells)
	}
	var b strings.Builder
	for j := from; j < min(len(t.Steps), from+cells); j++ {
		e, ok := in.entry(t, j, stamp)
		switch {
		case ok && e.pos != nil && len(e.pos.Layers) > 0:
			b.WriteString(st.Value.Render(settleCell(e.pos.SettleLayer, len(e.pos.Layers))))
		case ok && e.pending:
			b.WriteString(st.Dim.Render("~"))
		default:
			b.WriteString(st.Dim.Render("·"))
		}
	}
	caret := strings.Repeat(" ", len(label)+in.step-from) + "^"
	legend := "  each token's settle layer (· not computed)"
	if termtext.Width(caret)+len([]rune(legend)) <= width {
		caret += st.Dim.Render(legend)
	}
	return []string{st.Label.Render(label) + b.String(), caret}
}

// lensLayers picks which of n layers fit in rows: all of them, else the
// first, the settle layer and the last with evenly spaced ones between.
func lensLayers(n, settle, rows int) []int {
	if rows >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	pick := map[int]bool{}
	for _, l := range []int{n - 1, settle, 0} {
		if len(pick) < rows {
			pick[l] = true
		}
	}
	for step := 2; len(pick) < rows && step <= n; step *= 2 {
		for i := 1; i < step && len(pick) < rows; i += 2 {
			pick[i*(n-1)/step] = true
		}
	}
	for l := 0; len(pick) < rows && l < n; l++ {
		pick[l] = true
	}
	var out []int
	for l := range n {
		if pick[l] {
			out = append(out, l)
		}
	}
	return out
}

// lensTable is a row per layer shown: the layer (◆ where the final top-1
// settled), the inspected token's probability as a bar with its rank (>k
// outside the top k), then the layer's top candidates.
func lensTable(st theme.Styles, p *engine.LensPosition, chosen int32, text func(int32) string, rows, width int) []string {
	n := len(p.Layers)
	if rows < 1 {
		return nil
	}
	header := rows > n
	if header {
		rows--
	}
	layers := lensLayers(n, p.SettleLayer, rows)
	labelW := len(fmt.Sprintf("L%d", n-1))
	const barW = 8
	var out []string
	if header {
		h := fmt.Sprintf("%-*s  %-*s  %s", labelW+2, "layer", barW+13, "this token", "top candidates")
		if len(layers) < n {
			h += fmt.Sprintf(" · %d of %d layers", len(layers), n)
		}
		out = append(out, st.Dim.Render(h))
	}
	for _, l := range layers {
		ly := p.Layers[l]
		mark := "  "
		if l == p.SettleLayer {
			mark = " ◆"
		}
		rank, prob := -1, 0.0
		for j, c := range ly.Top {
			if int32(c[0]) == chosen {
				rank, prob = j+1, c[2]
				break
			}
		}
		rankText := fmt.Sprintf(">%d", len(ly.Top))
		probText := "—"
		if rank > 0 {
			rankText, probText = fmt.Sprintf("#%d", rank), panels.Percent(float32(prob))
		}
		row := st.Label.Render(fmt.Sprintf("%-*s", labelW, fmt.Sprintf("L%d", l))) + st.Value.Render(mark) + "  " +
			panels.Bar(st, prob, barW) + " " + st.Value.Render(fmt.Sprintf("%-4s%6s", rankText, probText)) + " │"
		used := labelW + 2 + 2 + barW + 1 + 10 + 2
		for _, c := range ly.Top {
			id := int32(c[0])
			piece := quoted(text(id))
			pct := panels.Percent(float32(c[2]))
			w := 1 + termtext.Width(piece) + 1 + len(pct)
			if used+w > width {
				break
			}
			style := st.Value
			if id == chosen {
				style = st.Sampled
			}
			row += " " + style.Render(piece) + " " + st.Dim.Render(pct)
			used += w
		}
		out = append(out, row)
	}
	return out
}
