package ui

import (
	"strings"
	"testing"
)

// TestForkNoteEscapesOnce: a token with control bytes shows escaped once,
// as the inspector shows it (\x1B), in the cursor's hint, the fork's
// status and the note under the forked reply, never "\\x1B".
func TestForkNoteEscapesOnce(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("Write a tiny Go program")
	h.key("tab", "home", "right", "right")
	esc := eng.ids["\x1b]52;c;aGk=\x07"]
	cands := mustStepInfo(t, m.conv.Last(), 2).Candidates
	for i := 0; i < len(cands) && cands[m.insp.Cand()].ID != esc; i++ {
		h.key("down")
	}
	if cands[m.insp.Cand()].ID != esc {
		t.Fatal("the cursor never reached the escape-sequence candidate")
	}
	const want = `"\x1B]52;c;aGk=\x07"`
	if !strings.Contains(m.status.text, want) {
		t.Errorf("cursor hint %q lacks %s", m.status.text, want)
	}
	h.key("enter")
	h.idle()
	if !strings.Contains(m.status.text, want) {
		t.Errorf("fork status %q lacks %s", m.status.text, want)
	}
	var note string
	for _, n := range m.conv.Last().Notes {
		if strings.Contains(n.Text, "forked at token") {
			note = n.Text
		}
	}
	if !strings.Contains(note, want) {
		t.Errorf("fork note %q lacks %s", note, want)
	}
	if v := m.View(); strings.Contains(v, `\\x1B`) {
		t.Errorf("the screen escapes a backslash twice:\n%s", v)
	}
}
