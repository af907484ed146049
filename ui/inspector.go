package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

type focusArea int

const (
	focusInput focusArea = iota
	focusTranscript
)

// inspector is the token cursor used while the transcript has focus.
type inspector struct {
	turn *conversation.Turn
	step int
	cand int // the candidate ↑/↓ selected at that step, for a fork
}

// probsView is the distribution the probability panel shows, with where
// it came from.
type probsView struct {
	title      string
	candidates []sample.Candidate
	chosen     int32
	hasChosen  bool
	entropy    float32
	// funnel and params: what each stage of the sampler left at this
	// step, under the settings it was drawn (or previewed) with.
	funnel sample.Funnel
	params sample.Params
	cursor int // the inspector's candidate cursor; -1 for none
	// notKept: the step is of an older reply that no longer keeps its
	// candidates (ui/conversation, detail.go).
	notKept bool
}

// emptyText is what the panel says when it has no candidates to show.
func (p probsView) emptyText() string {
	if p.notKept {
		return fmt.Sprintf("details not kept: only the %d newest replies keep each token's alternatives", conversation.DetailReplies)
	}
	return "no token sampled yet"
}

// enterInspector focuses the transcript on the last token of the latest
// reply; it reports false when there is nothing to inspect.
func (m *Model) enterInspector() bool {
	rs := m.conv.Replies()
	if len(rs) == 0 {
		m.setStatus("nothing to inspect yet: the inspector walks the tokens of replies generated here")
		return false
	}
	m.focus = focusTranscript
	m.input.Blur()
	t := rs[len(rs)-1]
	m.showStep(t, len(t.Steps)-1, true)
	return true
}

func (m *Model) leaveInspector() {
	m.focus = focusInput
	m.input.Focus()
	m.insp = inspector{}
	// Back to the live view: the newest step of the newest reply, and the
	// bottom of the transcript (drawn as Markdown again, its rows are not
	// the ones the inspector scrolled through).
	m.scroll.follow = true
	if rs := m.conv.Replies(); len(rs) > 0 {
		t := rs[len(rs)-1]
		m.showStep(t, len(t.Steps)-1, false)
	}
}

// showStep puts step k of reply t in the probability panel; inspecting
// also moves the token cursor there and scrolls to it.
func (m *Model) showStep(t *conversation.Turn, k int, inspecting bool) {
	if t == nil || k < 0 || k >= len(t.Steps) {
		return
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
		m.insp = inspector{turn: t, step: k, cand: cursor}
		m.revealSelection = true
		title = fmt.Sprintf("inspecting step %d/%d", k+1, len(t.Steps))
		if s.Forced {
			title += " · forked"
		}
	}
	if !kept {
		// An older reply keeps its tokens but not their alternatives
		// (ui/conversation, detail.go): say so rather than show an empty distribution.
		title += " · details not kept"
		m.probs = probsView{title: title, chosen: s.ID, hasChosen: true, entropy: s.Entropy, cursor: -1, notKept: true}
		if inspecting {
			m.insp.cand = -1
		}
		return
	}
	m.probs = probsView{title: title, candidates: s.Candidates, chosen: s.ID, hasChosen: true, entropy: s.Entropy,
		funnel: s.Funnel, params: s.Params, cursor: cursor}
}

// notKeptHint says why an older reply has no alternatives to pick from.
var notKeptHint = fmt.Sprintf("details not kept for this older reply: only the %d newest replies keep each token's alternatives to inspect and fork", conversation.DetailReplies)

// moveCandidate moves the fork cursor over the inspected step's candidates.
func (m *Model) moveCandidate(delta int) {
	n := len(m.probs.candidates)
	if m.insp.turn != nil && !m.insp.turn.HasDetail() {
		m.setStatus(notKeptHint)
		return
	}
	if m.insp.turn == nil || n == 0 || m.probs.cursor < 0 {
		return
	}
	m.insp.cand = min(max(m.insp.cand+delta, 0), n-1)
	m.probs.cursor = m.insp.cand
	c := m.probs.candidates[m.insp.cand]
	m.setStatus(fmt.Sprintf("enter: continue the reply from step %d with %q (%s)", m.insp.step+1,
		termtext.Visible(m.eng.TokenText(c.ID)), panels.Percent(c.Prob)))
}

// forkHere forks the inspected reply at the cursor's candidate.
func (m *Model) forkHere() tea.Cmd {
	t, k := m.insp.turn, m.insp.step
	if t == nil || k < 0 || k >= len(t.Steps) {
		return nil
	}
	s, kept := t.StepInfo(k)
	if !kept {
		m.setError(notKeptHint)
		return nil
	}
	cands := s.Candidates
	if m.insp.cand < 0 || m.insp.cand >= len(cands) {
		return nil
	}
	return m.fork(t, k, cands[m.insp.cand].ID)
}

// moveInspector moves the token cursor by delta, crossing into the
// neighbouring replies at either end.
func (m *Model) moveInspector(delta int) {
	rs := m.conv.Replies()
	ri := -1
	for i, t := range rs {
		if t == m.insp.turn {
			ri = i
		}
	}
	if ri < 0 {
		m.enterInspector()
		return
	}
	k := m.insp.step + delta
	for k < 0 && ri > 0 {
		ri--
		k += len(rs[ri].Steps)
	}
	for ri < len(rs) && k >= len(rs[ri].Steps) && ri < len(rs)-1 {
		k -= len(rs[ri].Steps)
		ri++
	}
	t := rs[ri]
	m.showStep(t, min(max(k, 0), len(t.Steps)-1), true)
}

// inspectorKey handles a key while the transcript has focus.
func (m *Model) inspectorKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Back):
		m.leaveInspector()
	case key.Matches(msg, k.PrevToken):
		m.moveInspector(-1)
	case key.Matches(msg, k.NextToken):
		m.moveInspector(+1)
	case key.Matches(msg, k.FirstToken):
		if t := m.insp.turn; t != nil {
			m.showStep(t, 0, true)
		}
	case key.Matches(msg, k.LastToken):
		if t := m.insp.turn; t != nil {
			m.showStep(t, len(t.Steps)-1, true)
		}
	case key.Matches(msg, k.CandUp):
		m.moveCandidate(-1)
	case key.Matches(msg, k.CandDown):
		m.moveCandidate(+1)
	case key.Matches(msg, k.Fork):
		return m.forkHere()
	case key.Matches(msg, k.PrevBranch):
		m.switchBranch(-1)
	case key.Matches(msg, k.NextBranch):
		m.switchBranch(+1)
	case key.Matches(msg, k.HeatBasis):
		m.toggleHeatBasis()
	case key.Matches(msg, k.Heatmap):
		m.heat = !m.heat
		if m.heat {
			m.setStatus("heatmap: each generated token coloured by its probability (red < 10% … green ≥ 90%)")
		} else {
			m.setStatus("heatmap off")
		}
	case key.Matches(msg, k.LineUp):
		m.scrollBy(-1)
	case key.Matches(msg, k.LineDown):
		m.scrollBy(+1)
	case msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace:
		// Typing goes back to the input, so a stray inspector session never
		// swallows a message.
		m.leaveInspector()
		m.input.Update(msg)
	}
	return nil
}
