package ui

import (
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/inspector"
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

// inspectorHost is what the inspector's keys (ui/inspector) do to the chat.
type inspectorHost struct{ *Model }

func (h inspectorHost) Info(s string)                 { h.setStatus(s) }
func (h inspectorHost) Error(s string)                { h.setError(s) }
func (h inspectorHost) Replies() []*conversation.Turn { return h.conv.Replies() }
func (h inspectorHost) Reveal()                       { h.tr.RevealSelection() }
func (h inspectorHost) Enter() bool                   { return h.enterInspector() }
func (h inspectorHost) Leave()                        { h.leaveInspector() }
func (h inspectorHost) TokenText(id int32) string     { return h.eng.TokenText(id) }
func (h inspectorHost) SwitchBranch(dir int)          { h.switchBranch(dir) }
func (h inspectorHost) Scroll(rows int)               { h.scrollBy(rows) }
func (h inspectorHost) Redraw()                       { h.tr.Invalidate() }
func (h inspectorHost) MoE() bool                     { return h.moe() }
func (h inspectorHost) Type(msg tea.KeyMsg)           { h.leaveInspector(); h.input.Update(msg) }

// LensStamp is what a computed lens depends on besides its position: the
// conversation's revision (a new chat, a branch switch), the model, its
// backend.
func (h inspectorHost) LensStamp() string {
	return fmt.Sprintf("%d\x00%s\x00%s", h.conv.Rev(), h.info.Path, h.info.Backend)
}

// Lens reads the lens of step k of reply t, not while a reply is written.
func (h inspectorHost) Lens(t *conversation.Turn, k int, stamp string) (tea.Cmd, error) {
	if h.gen != nil {
		return nil, errors.New("lens: waits for the reply being written (esc stops it); ←/→ asks again")
	}
	return inspector.StartLens(h.baseCtx, h.closed, h.wg, h.eng, inspector.LensRead{Turn: t, Step: k, Stamp: stamp, Vocab: h.info.Vocab})
}
func (h inspectorHost) Fork(t *conversation.Turn, k int, token int32) tea.Cmd {
	return h.fork(t, k, token)
}
