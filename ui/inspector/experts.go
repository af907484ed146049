package inspector

import (
	"fmt"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// RouterPanel is the router panel's data: the experts of the step the
// probability panel shows (live, inspected or previewed); experts is the
// model's expert count (engine.ModelInfo.Experts).
func (in *Inspector) RouterPanel(experts int) panels.Router {
	empty := in.Probs.EmptyText()
	if in.Probs.HasChosen && !in.Probs.NotKept {
		empty = "no routing reported for this step"
	}
	return panels.Router{Title: in.Probs.Title, Experts: experts, Layers: in.Probs.Experts, Empty: empty}
}

// Experts reports whether the expert-usage map is on.
func (in *Inspector) Experts() bool { return in.experts }

// ToggleExperts switches the expert-usage map on or off; the text is for
// the status line. moe says whether the model has experts at all.
func (in *Inspector) ToggleExperts(moe bool) string {
	if !moe {
		in.experts = false
		return "expert map: this model is dense, every token runs the whole FFN"
	}
	in.experts = !in.experts
	if in.experts {
		return "expert map: how many of the reply's tokens each layer routed to each expert (█ = the busiest)"
	}
	return "expert map off"
}

// ExpertUsage is the expert map's data for reply t: where each of its
// tokens was routed; experts is the model's expert count.
func (in *Inspector) ExpertUsage(t *conversation.Turn, experts int) panels.ExpertUsage {
	if t == nil {
		return panels.ExpertUsage{Title: "reply", Empty: "no reply generated here yet"}
	}
	title := fmt.Sprintf("reply of %d tokens", len(t.Steps))
	if !t.HasDetail() {
		return panels.ExpertUsage{Title: title, Empty: fmt.Sprintf("routing not kept: only the %d newest replies keep each token's experts", conversation.DetailReplies)}
	}
	routes := make([][]engine.Routing, len(t.Steps))
	for k := range routes {
		routes[k] = t.Routing(k)
	}
	u := panels.NewExpertUsage(title, routes, experts)
	u.Empty = "no routing reported for this reply"
	return u
}

// ExpertView is what the main column shows of a mixture-of-experts model's
// routing, in at most a share of h rows of width cells: the expert map
// while it is on and inspecting, else on narrow screens the router panel
// unless f2 hid it (wide ones have it in the side column).
func (in *Inspector) ExpertView(st theme.Styles, experts int, replies []*conversation.Turn, inspecting, wide, hidePanels bool, h, width int) []string {
	var render func(rows int) []string
	room := h / 3
	switch {
	case in.Experts() && inspecting:
		u := in.ExpertUsage(in.StripTurn(true, replies), experts)
		render = func(rows int) []string { return panels.ExpertHeatLines(st, u, width, rows) }
		room = h / 2
	case !wide && !hidePanels:
		// the narrow router panel: optional, as in the side column
		r := in.RouterPanel(experts)
		render = func(rows int) []string {
			head := st.Label.Render(termtext.Truncate("router · "+panels.RouterTitle(r), width))
			return append([]string{head}, panels.RouterLines(st, r, width, rows-1)...)
		}
	default:
		return nil
	}
	rows := min(len(render(h)), room, h-4)
	if rows < 2 {
		return nil
	}
	return render(rows)
}
