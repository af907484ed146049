package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
)

// The inspector (ui/inspector) keeps the token cursor and the panel's
// distribution; here it is tied to focus, the input, scrolling, forks and
// branch switches.

type focusArea int

const (
	focusInput focusArea = iota
	focusTranscript
)

// inspecting reports whether the transcript has focus (the token cursor).
func (m *Model) inspecting() bool { return m.focus == focusTranscript }

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
	m.insp.Clear()
	// Back to the live view: the newest step of the newest reply, and the
	// bottom of the transcript (drawn as Markdown again, its rows are not
	// the ones the inspector scrolled through).
	m.tr.Follow()
	if rs := m.conv.Replies(); len(rs) > 0 {
		t := rs[len(rs)-1]
		m.showStep(t, len(t.Steps)-1, false)
	}
}

// showStep puts step k of reply t in the probability panel; inspecting
// also moves the token cursor there and scrolls to it.
func (m *Model) showStep(t *conversation.Turn, k int, inspecting bool) {
	if m.insp.Show(t, k, inspecting) {
		m.tr.RevealSelection()
	}
}

// moveCandidate moves the fork cursor over the inspected step's candidates.
func (m *Model) moveCandidate(delta int) {
	if s := m.insp.MoveCandidate(delta, m.eng.TokenText); s != "" {
		m.setStatus(s)
	}
}

// forkHere forks the inspected reply at the cursor's candidate.
func (m *Model) forkHere() tea.Cmd {
	t, k, token, ok, err := m.insp.ForkChoice()
	if err != nil {
		m.setError(err.Error())
		return nil
	}
	if !ok {
		return nil
	}
	return m.fork(t, k, token)
}

// moveInspector moves the token cursor by delta, crossing into the
// neighbouring replies at either end.
func (m *Model) moveInspector(delta int) {
	t, k, ok := m.insp.Next(delta, m.conv.Replies())
	if !ok {
		m.enterInspector()
		return
	}
	m.showStep(t, k, true)
}

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
		if t := m.insp.Turn(); t != nil {
			m.showStep(t, 0, true)
		}
	case key.Matches(msg, k.LastToken):
		if t := m.insp.Turn(); t != nil {
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
		status := m.insp.ToggleHeatBasis()
		m.tr.Invalidate()
		m.setStatus(status)
	case key.Matches(msg, k.Heatmap):
		m.setStatus(m.insp.ToggleHeat())
	case key.Matches(msg, k.Experts):
		m.setStatus(m.insp.ToggleExperts(m.moe()))
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
