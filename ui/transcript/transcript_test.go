package transcript

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

// longTranscript is a transcript 40×6 of a question and a reply of 30
// one-word paragraphs, far taller than the view.
func longTranscript(t *testing.T) (*Transcript, *conversation.Turn) {
	t.Helper()
	tr := newTestTranscript(t)
	tr.SetSize(40, 6)
	tr.SetModel("model", false)
	reply := &conversation.Turn{Role: "assistant"}
	for i := range 30 {
		reply.AppendToken(engine.TokenInfo{ID: int32(i + 1), Piece: fmt.Sprintf("word%d\n\n", i)})
	}
	tr.conv.Append(&conversation.Turn{Role: "user", Content: "hi"}, reply)
	return tr, reply
}

// checkView asserts View's shape: exactly the height in rows, none wider
// than the width.
func checkView(t *testing.T, tr *Transcript, w, h int) string {
	t.Helper()
	v := tr.View()
	rows := strings.Split(v, "\n")
	if len(rows) != h {
		t.Fatalf("%d rows, want %d", len(rows), h)
	}
	for i, r := range rows {
		if termtext.Width(r) > w {
			t.Fatalf("row %d is %d cells wide: %q", i, termtext.Width(r), r)
		}
	}
	return v
}

// The view follows the end until scrolled up, stays put while the reply
// grows, and follows again once scrolled back to the bottom.
func TestTranscriptFollowAndScroll(t *testing.T) {
	tr, reply := longTranscript(t)
	checkView(t, tr, 40, 6)
	bottom := tr.YOffset()
	if !tr.Following() || !tr.AtBottom() || bottom == 0 {
		t.Fatalf("not at the end: offset %d of %d rows, following %v", bottom, tr.TotalLineCount(), tr.Following())
	}
	tr.ScrollBy(-2)
	if tr.Following() || tr.YOffset() != bottom-2 {
		t.Fatalf("scrolled up 2: offset %d (bottom %d), following %v", tr.YOffset(), bottom, tr.Following())
	}
	reply.AppendToken(engine.TokenInfo{ID: 99, Piece: "more\n\nand more"})
	checkView(t, tr, 40, 6)
	if tr.YOffset() != bottom-2 {
		t.Errorf("the view moved while scrolled up: %d -> %d", bottom-2, tr.YOffset())
	}
	tr.Update(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	if tr.YOffset() != bottom-2-WheelStep {
		t.Errorf("wheel up: offset %d, want %d", tr.YOffset(), bottom-2-WheelStep)
	}
	tr.Update(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionRelease})
	if tr.YOffset() != bottom-2-WheelStep {
		t.Error("a wheel release scrolled")
	}
	tr.ScrollBy(1000)
	if !tr.Following() || !tr.AtBottom() {
		t.Errorf("scrolled to the end: following %v, at bottom %v", tr.Following(), tr.AtBottom())
	}
	if v := checkView(t, tr, 40, 6); !strings.Contains(v, "and more") {
		t.Errorf("the end is not in view:\n%s", v)
	}

	// Too small to show: nothing scrolls.
	tr.SetSize(0, 0)
	off := tr.YOffset()
	tr.ScrollBy(-3)
	if tr.YOffset() != off || !tr.Following() {
		t.Error("a transcript without room scrolled")
	}

	tr.SetSize(40, 6)
	tr.ScrollBy(-3)
	tr.Reset()
	if !tr.Following() || tr.YOffset() != 0 || len(tr.renders) != 0 {
		t.Errorf("after Reset: following %v, offset %d, %d cached turns", tr.Following(), tr.YOffset(), len(tr.renders))
	}
}

// The inspector's token is scrolled into view once, and the turn draws
// plain text with it highlighted; Forget drops a turn's rows.
func TestTranscriptRevealsTheCursor(t *testing.T) {
	tr, reply := longTranscript(t)
	checkView(t, tr, 40, 6)
	tr.SetCursor(Cursor{Inspecting: true, Turn: reply, Step: 0})
	tr.RevealSelection()
	checkView(t, tr, 40, 6)
	lines, sel := tr.Lines()
	if sel < 0 || !strings.Contains(lines[sel], "word0") {
		t.Fatalf("selected row %d of %d", sel, len(lines))
	}
	if tr.Following() || sel < tr.YOffset() || sel >= tr.YOffset()+6 {
		t.Errorf("selected row %d not in view at %d (following %v)", sel, tr.YOffset(), tr.Following())
	}
	// Revealing happens once: scrolling away from the token is allowed.
	tr.ScrollBy(+4)
	checkView(t, tr, 40, 6)
	if sel >= tr.YOffset() {
		t.Errorf("the view went back to the token: offset %d, token at %d", tr.YOffset(), sel)
	}
	if tr.renders[reply] == nil {
		t.Fatal("the reply's rows are not kept")
	}
	tr.Forget(reply)
	if _, ok := tr.renders[reply]; ok {
		t.Error("Forget kept the rows")
	}
}

// Rows are kept per turn until something they show changes; Invalidate
// and ToggleThinking draw every turn again.
func TestTranscriptKeepsRowsUntilInvalidated(t *testing.T) {
	tr, reply := longTranscript(t)
	tr.View()
	c := tr.renders[reply]
	if c == nil || !c.render.valid {
		t.Fatal("no rows kept for the reply")
	}
	tr.SetModel("renamed", false)
	if v := tr.View(); strings.Contains(v, "renamed") || strings.Contains(strings.Join(c.render.lines, "\n"), "renamed") {
		t.Error("kept rows were drawn again without a change they show")
	}
	tr.Invalidate()
	if c.render.valid {
		t.Error("Invalidate left the rows valid")
	}
	tr.View()
	if !strings.Contains(c.render.lines[0], "renamed") {
		t.Errorf("label after Invalidate: %q", c.render.lines[0])
	}
	if !tr.ToggleThinking() || c.render.valid {
		t.Error("ToggleThinking did not show reasoning and draw again")
	}
	if tr.ToggleThinking() {
		t.Error("a second ToggleThinking left reasoning shown")
	}
}
