package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

// The conversation is a tree. m.turns is the path on screen; where it
// branches, the first turn of each alternative points to the branchSet they
// share, whose alts hold each alternative's path from that position on. A
// fork (an alternative token forced at some step) and a regenerated reply
// both add an alternative; [ and ] switch between them.

// branchSet is the alternatives at one position of the conversation.
type branchSet struct {
	alts [][]*turn // each alternative's turns from this position on
	cur  int       // the one on screen
	prev int       // the one on screen before the newest was added
}

// turnTree is what a turn knows about its place in the tree.
type turnTree struct {
	branch *branchSet // shared by the first turns of the alternatives here
	// forked: the reply continues an earlier one from step forkStep with a
	// token the user chose (forkText, replacing wasText).
	forked            bool
	forkStep          int
	forkText, wasText string
}

// pendingFork is a fork waiting for startGeneration to pick it up.
type pendingFork struct {
	point engine.ForkPoint
	kept  turn // the text, steps, detail and reasoning before the fork point
}

func (m *Model) turnIndex(t *turn) int {
	for i, x := range m.turns {
		if x == t {
			return i
		}
	}
	return -1
}

// syncBranches records the path on screen as the current alternative of
// every branch point along it, so the tree always matches what is shown.
func (m *Model) syncBranches() {
	for i, t := range m.turns {
		if set := t.tree.branch; set != nil {
			set.alts[set.cur] = append([]*turn(nil), m.turns[i:]...)
		}
	}
}

// openBranch makes position i a branch point (if it is not yet one) and
// cuts the path there, ready for a new alternative.
func (m *Model) openBranch(i int) *branchSet {
	m.syncBranches()
	set := m.turns[i].tree.branch
	if set == nil {
		set = &branchSet{alts: [][]*turn{append([]*turn(nil), m.turns[i:]...)}}
		m.turns[i].tree.branch = set
	}
	m.turns = m.turns[:i:i]
	return set
}

// joinBranch makes first, just appended at the branch point, the newest
// alternative of set.
func (m *Model) joinBranch(set *branchSet, first *turn) {
	if set == nil || first == nil {
		return
	}
	first.tree.branch = set
	set.prev = set.cur
	set.alts = append(set.alts, []*turn{first})
	set.cur = len(set.alts) - 1
	m.invalidate()
}

// dropBranch undoes joinBranch for a reply that produced nothing (it was
// removed from position i): its alternative goes, and the one shown before
// comes back.
func (m *Model) dropBranch(t *turn, i int) {
	set := t.tree.branch
	if set == nil || i < 0 {
		return
	}
	for k, alt := range set.alts {
		if len(alt) > 0 && alt[0] == t {
			set.alts = append(set.alts[:k], set.alts[k+1:]...)
			break
		}
	}
	if len(set.alts) == 0 {
		return
	}
	set.cur = min(set.prev, len(set.alts)-1)
	m.turns = append(m.turns[:i:i], set.alts[set.cur]...)
	if len(set.alts) == 1 {
		set.alts[0][0].tree.branch = nil
	}
	m.invalidate()
}

// fork continues reply t from step k with candidate token instead of what
// was drawn there: the reply is cut at that step, the engine rewinds its KV
// cache to that position (reusing the prompt and the kept tokens), forces
// the token and generates on. The old reply stays as a sibling branch.
func (m *Model) fork(t *turn, k int, token int32) tea.Cmd {
	if m.gen != nil {
		m.setError("a reply is still being written: Esc stops it first")
		return nil
	}
	i := m.turnIndex(t)
	if i < 0 || t.role != "assistant" || k < 0 || k >= len(t.steps) {
		m.setError("nothing to fork here: pick a token of a reply generated in this session")
		return nil
	}
	if token == t.steps[k].id {
		m.setStatus("that is the token the reply already has; ↑/↓ picks another")
		return nil
	}
	kept, ok := t.prefix(k)
	if !ok {
		m.setError(fmt.Sprintf("details not kept for this older reply (only the %d newest keep each token's alternatives): fork a recent one", detailReplies))
		return nil
	}
	prefix := make([]int32, k)
	for j := range prefix {
		prefix[j] = t.steps[j].id
	}
	m.pending = &pendingFork{point: engine.ForkPoint{Prefix: prefix, Token: token}, kept: kept}
	was := t.steps[k].id
	set := m.openBranch(i)
	if m.focus == focusTranscript {
		m.leaveInspector()
	}
	cmd := m.startGeneration()
	if m.gen == nil || m.gen.reply == nil {
		return cmd
	}
	r := m.gen.reply
	r.tree.forked, r.tree.forkStep = true, k
	r.tree.forkText, r.tree.wasText = termtext.Visible(m.eng.TokenText(token)), termtext.Visible(m.eng.TokenText(was))
	m.joinBranch(set, r)
	r.addNote(noteInfo, forkNote(r), true)
	m.setStatus(fmt.Sprintf("forked at token %d: %q instead of %q · [ and ] switch branches", k+1, r.tree.forkText, r.tree.wasText))
	return cmd
}

// applyPendingFork turns the next generation into the pending fork: its
// request continues from the fork point and its reply starts with the
// kept text and steps. startGeneration calls it for every reply, which
// also keeps the request for /export.
func (m *Model) applyPendingFork(req *engine.Request, reply *turn) {
	f := m.pending
	m.pending = nil
	if f == nil {
		m.recordRequest(*req, reply)
		return
	}
	defer func() { m.recordRequest(*req, reply) }()
	p := f.point
	req.Fork = &p
	reply.content, reply.steps, reply.detail, reply.think = f.kept.content, f.kept.steps, f.kept.detail, f.kept.think
}

// switchBranch shows the next (dir=+1) or previous alternative at the
// branch point of the inspected reply, else the newest branch point.
func (m *Model) switchBranch(dir int) {
	if m.gen != nil {
		m.setError("a reply is still being written: Esc stops it first")
		return
	}
	m.syncBranches()
	i := -1
	if t := m.insp.turn; t != nil && m.focus == focusTranscript {
		for j := m.turnIndex(t); j >= 0; j-- {
			if m.turns[j].tree.branch != nil {
				i = j
				break
			}
		}
	}
	if i < 0 {
		for j := len(m.turns) - 1; j >= 0; j-- {
			if m.turns[j].tree.branch != nil {
				i = j
				break
			}
		}
	}
	if i < 0 {
		m.setStatus("no branches here: Enter on another candidate in the inspector forks, Ctrl+R regenerates as a sibling")
		return
	}
	set := m.turns[i].tree.branch
	set.cur = (set.cur + dir + len(set.alts)) % len(set.alts)
	m.turns = append(m.turns[:i:i], set.alts[set.cur]...)
	m.invalidate()
	m.setStatus(fmt.Sprintf("branch %d of %d", set.cur+1, len(set.alts)))
	if m.focus == focusTranscript {
		if first := m.turns[i]; first.role == "assistant" && len(first.steps) > 0 {
			k := len(first.steps) - 1
			if first.tree.forked {
				k = first.tree.forkStep
			}
			m.showStep(first, k, true)
		} else {
			m.leaveInspector()
		}
	}
	m.autosave()
}

// branchLabel is the label's note on a branch point: "branch 2/3".
func (m *Model) branchLabel(t *turn) string {
	set := t.tree.branch
	if set == nil {
		return ""
	}
	for k, alt := range set.alts {
		if len(alt) > 0 && alt[0] == t {
			return fmt.Sprintf("⑂ branch %d/%d", k+1, len(set.alts))
		}
	}
	return ""
}

// forkNote is the line under a forked reply's label that marks the fork point.
func forkNote(t *turn) string {
	return fmt.Sprintf("⑂ forked at token %d: %q instead of %q ([ ] switch)", t.tree.forkStep+1, t.tree.forkText, t.tree.wasText)
}
