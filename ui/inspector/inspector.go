package inspector

import (
	"errors"
	"fmt"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// Probs is the distribution the probability panel shows, with where it
// came from.
type Probs struct {
	Title      string
	Candidates []sample.Candidate
	Chosen     int32
	HasChosen  bool
	Entropy    float32
	// Funnel and Params: what each stage of the sampler left at this
	// step, under the settings it was drawn (or previewed) with.
	Funnel sample.Funnel
	Params sample.Params
	Cursor int // the inspector's candidate cursor; -1 for none
	// NotKept: the step is of an older reply that no longer keeps its
	// candidates (ui/conversation, detail.go).
	NotKept bool
	// Experts is the step's expert routing (a mixture-of-experts model):
	// the forward pass that computed this distribution.
	Experts []engine.Routing
	// Spec is the step's speculative draft and its fate (nil where none
	// was verified).
	Spec *engine.SpecMark
}

// EmptyText is what the panel says when it has no candidates to show.
func (p Probs) EmptyText() string {
	if p.NotKept {
		return fmt.Sprintf("details not kept: only the %d newest replies keep each token's alternatives", conversation.DetailReplies)
	}
	return "no token sampled yet"
}

// IsPreview reports whether the panel shows a preview of new settings.
func (p Probs) IsPreview() bool { return strings.HasPrefix(p.Title, "preview") }

// NextToken is the panel before anything was sampled.
func NextToken() Probs { return Probs{Title: "next token"} }

// Inspector is the token cursor used while the transcript has focus, and
// the probability panel it (or the live stream) fills.
type Inspector struct {
	turn *conversation.Turn
	step int
	cand int // the candidate ↑/↓ selected at that step, for a fork

	// Probs is what the probability panel shows.
	Probs Probs

	heat        bool
	bySurprisal bool // the heatmap colours by surprisal, not probability
	experts     bool // the expert-usage map is on
	lens        lensState
}

// New is an inspector with nothing selected.
func New() Inspector { return Inspector{Probs: NextToken()} }

// Turn is the inspected reply, nil when none.
func (in *Inspector) Turn() *conversation.Turn { return in.turn }

// Step is the inspected step of Turn.
func (in *Inspector) Step() int { return in.step }

// Cand is the candidate the cursor is on, -1 when there is none to pick.
func (in *Inspector) Cand() int { return in.cand }

// Clear drops the cursor; the panel keeps what it shows. The lens view
// closes with the inspector (its computed lenses stay).
func (in *Inspector) Clear() {
	in.turn, in.step, in.cand = nil, 0, 0
	in.lens.on, in.lens.note = false, ""
}

// Show puts step k of reply t in the probability panel; inspecting also
// moves the token cursor there. It reports whether the cursor moved (the
// transcript then scrolls to it).
func (in *Inspector) Show(t *conversation.Turn, k int, inspecting bool) bool {
	if t == nil || k < 0 || k >= len(t.Steps) {
		return false
	}
	s, kept := t.StepInfo(k)
	title := fmt.Sprintf("step %d", k+1)
	cursor := -1
	if inspecting {
		// The cursor starts on the token the reply has.
		cursor = 0
		for i, c := range s.Candidates {
			if c.ID == s.ID {
				cursor = i
			}
		}
		in.turn, in.step, in.cand = t, k, cursor
		title = fmt.Sprintf("inspecting step %d/%d", k+1, len(t.Steps))
		if s.Forced {
			title += " · forked"
		}
	}
	if s.Spec != nil {
		title += " · " + string(s.Spec.Fate)
	}
	if !kept {
		// An older reply keeps its tokens but not their alternatives:
		// say so rather than show an empty distribution.
		title += " · details not kept"
		in.Probs = Probs{Title: title, Chosen: s.ID, HasChosen: true, Entropy: s.Entropy, Cursor: -1, NotKept: true}
		if inspecting {
			in.cand = -1
		}
		return inspecting
	}
	in.Probs = Probs{Title: title, Candidates: s.Candidates, Chosen: s.ID, HasChosen: true, Entropy: s.Entropy,
		Funnel: s.Funnel, Params: s.Params, Cursor: cursor, Experts: s.Experts, Spec: s.Spec}
	return inspecting
}

// ShowPreview puts a re-ranking of the last distribution under new
// settings p in the panel.
func (in *Inspector) ShowPreview(r sample.Result, p sample.Params) {
	// The preview re-ranks the distribution the panel showed: the same
	// forward pass, so the same experts.
	in.Probs = Probs{Title: "preview · new settings", Candidates: r.Candidates, Chosen: r.Token, HasChosen: true, Entropy: r.Entropy,
		Funnel: r.Funnel, Params: p, Experts: in.Probs.Experts}
}

// NotKeptHint says why an older reply has no alternatives to pick from.
var NotKeptHint = fmt.Sprintf("details not kept for this older reply: only the %d newest replies keep each token's alternatives to inspect and fork", conversation.DetailReplies)

// MoveCandidate moves the fork cursor over the inspected step's
// candidates; the text is for the status line ("" for nothing to say).
// text gives a token's piece.
func (in *Inspector) MoveCandidate(delta int, text func(int32) string) string {
	n := len(in.Probs.Candidates)
	if in.turn != nil && !in.turn.HasDetail() {
		return NotKeptHint
	}
	if in.turn == nil || n == 0 || in.Probs.Cursor < 0 {
		return ""
	}
	in.cand = min(max(in.cand+delta, 0), n-1)
	in.Probs.Cursor = in.cand
	c := in.Probs.Candidates[in.cand]
	// Visible escapes the piece already; %q would escape it twice.
	which := panels.Percent(c.Prob)
	if in.ProbsPanel(text, true).LooksLikeAnother(c.ID) {
		which = fmt.Sprintf("token #%d, %s", c.ID, which)
	}
	return fmt.Sprintf("enter: continue the reply from step %d with \"%s\" (%s)", in.step+1,
		termtext.Visible(text(c.ID)), which)
}

// ErrNotKept: the inspected step's alternatives were dropped.
var ErrNotKept = errors.New(NotKeptHint)

// ForkChoice is the fork the cursor points at: reply t continued from step
// k with token. ok is false when there is nothing to fork; err is
// ErrNotKept when the reply no longer keeps its alternatives.
func (in *Inspector) ForkChoice() (t *conversation.Turn, k int, token int32, ok bool, err error) {
	t, k = in.turn, in.step
	if t == nil || k < 0 || k >= len(t.Steps) {
		return nil, 0, 0, false, nil
	}
	s, kept := t.StepInfo(k)
	if !kept {
		return nil, 0, 0, false, ErrNotKept
	}
	cands := s.Candidates
	if in.cand < 0 || in.cand >= len(cands) {
		return nil, 0, 0, false, nil
	}
	return t, k, cands[in.cand].ID, true, nil
}

// Next is the step delta tokens from the cursor over replies, crossing
// into the neighbouring replies at either end; ok is false when the
// inspected reply is not among them.
func (in *Inspector) Next(delta int, replies []*conversation.Turn) (t *conversation.Turn, k int, ok bool) {
	ri := -1
	for i, r := range replies {
		if r == in.turn {
			ri = i
		}
	}
	if ri < 0 {
		return nil, 0, false
	}
	k = in.step + delta
	for k < 0 && ri > 0 {
		ri--
		k += len(replies[ri].Steps)
	}
	for ri < len(replies) && k >= len(replies[ri].Steps) && ri < len(replies)-1 {
		k -= len(replies[ri].Steps)
		ri++
	}
	t = replies[ri]
	return t, min(max(k, 0), len(t.Steps)-1), true
}

// ProbsPanel is the probability panel's data; text gives a token's piece,
// and the cursor shows only while inspecting.
func (in *Inspector) ProbsPanel(text func(int32) string, inspecting bool) panels.Probs {
	p := in.Probs
	var draft *panels.Draft
	if m := p.Spec; m != nil {
		draft = &panels.Draft{Source: m.Source, Fate: string(m.Fate), Token: m.Draft, Candidates: m.DraftCandidates}
	}
	return panels.Probs{
		Draft:      draft,
		Title:      p.Title,
		Candidates: p.Candidates,
		Chosen:     p.Chosen,
		HasChosen:  p.HasChosen,
		Entropy:    p.Entropy,
		Text:       text,
		Empty:      p.EmptyText(),
		Cursor:     p.Cursor,
		HasCursor:  p.Cursor >= 0 && inspecting,
	}
}

// FunnelView is the funnel for the step the panel shows, and the setting
// to highlight (changed) when it is a preview of a change.
func (in *Inspector) FunnelView(changed string) (sample.Funnel, sample.Params, string) {
	if in.Probs.IsPreview() {
		return in.Probs.Funnel, in.Probs.Params, changed
	}
	return in.Probs.Funnel, in.Probs.Params, ""
}

// StatusFunnel puts the funnel in the narrow status bar while the sampler
// is what the user looks at: inspecting, or previewing new settings.
func (in *Inspector) StatusFunnel(inspecting bool) *sample.Funnel {
	f := in.Probs.Funnel
	if f[0].Stage == sample.StageNone {
		return nil
	}
	if inspecting || in.Probs.IsPreview() {
		return &f
	}
	return nil
}
