package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

// The conversation is a tree (ui/conversation keeps it); here a fork or a
// branch switch is tied to the generation, the inspector and the status
// line.

// fork continues reply t from step k with candidate token instead of what
// was drawn there: the reply is cut at that step, the engine rewinds its KV
// cache to that position (reusing the prompt and the kept tokens), forces
// the token and generates on. The old reply stays as a sibling branch.
func (m *Model) fork(t *conversation.Turn, k int, token int32) tea.Cmd {
	if m.gen != nil {
		m.setError("a reply is still being written: Esc stops it first")
		return nil
	}
	f, err := m.conv.PlanFork(t, k, token)
	if err != nil {
		if line, isErr := conversation.ForkRefusal(err); isErr {
			m.setError(line)
		} else {
			m.setStatus(line)
		}
		return nil
	}
	m.pending = f
	set := m.conv.OpenBranch(f.At)
	if m.focus == focusTranscript {
		m.leaveInspector()
	}
	cmd := m.startGeneration()
	if m.gen == nil || m.gen.reply == nil {
		return cmd
	}
	r := m.gen.reply
	m.conv.JoinBranch(set, r)
	r.MarkForked(k, termtext.Visible(m.eng.TokenText(token)), termtext.Visible(m.eng.TokenText(f.Was)))
	// The texts are escaped already (Visible); %q would escape them twice.
	m.setStatus(fmt.Sprintf("forked at token %d: \"%s\" instead of \"%s\" · alt+, / alt+. switch branches", k+1, r.Tree.ForkText, r.Tree.WasText))
	return cmd
}

// applyPendingFork turns the next generation into the pending fork: its
// request continues from the fork point and its reply starts with the
// kept text and steps. startGeneration calls it for every reply, which
// also keeps the request for /export.
func (m *Model) applyPendingFork(req *engine.Request, reply *conversation.Turn) {
	f := m.pending
	m.pending = nil
	if f == nil {
		m.recordRequest(*req, reply)
		return
	}
	defer func() { m.recordRequest(*req, reply) }()
	p := f.Point
	req.Fork = &p
	reply.ContinueFrom(f.Kept)
}

// switchBranch shows the next (dir=+1) or previous alternative at the
// branch point of the inspected reply, else the newest branch point.
func (m *Model) switchBranch(dir int) {
	if m.gen != nil {
		m.setError("a reply is still being written: Esc stops it first")
		return
	}
	from := -1
	if t := m.insp.Turn(); t != nil && m.focus == focusTranscript {
		from = m.conv.Index(t)
	}
	i, k, n, ok := m.conv.SwitchBranch(from, dir)
	if !ok {
		m.setStatus("no branches here: Enter on another candidate in the inspector forks, Ctrl+R regenerates as a sibling")
		return
	}
	m.setStatus(fmt.Sprintf("branch %d of %d", k, n))
	if m.focus == focusTranscript {
		if first := m.conv.Turns()[i]; first.Role == "assistant" && len(first.Steps) > 0 {
			k := len(first.Steps) - 1
			if first.Tree.Forked {
				k = first.Tree.ForkStep
			}
			m.showStep(first, k, true)
		} else {
			m.leaveInspector()
		}
	}
	m.saver.Save()
}
