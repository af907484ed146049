package ui

import (
	"strings"
	"testing"
)

// TestBranchHintsNameKeysThatWork: outside the inspector [ and ] are typed
// into the message, so every hint shown there names alt+, / alt+. (which
// switch branches with the focus anywhere), and those keys do switch.
func TestBranchHintsNameKeysThatWork(t *testing.T) {
	var hints []string
	check := func(where string, s string) {
		t.Helper()
		hints = append(hints, s)
		if strings.Contains(s, "[ ]") || strings.Contains(s, "[ and ]") {
			t.Errorf("%s names [ ] outside the inspector: %q", where, s)
		}
		if !strings.Contains(s, "alt+, / alt+.") {
			t.Errorf("%s does not name alt+, / alt+.: %q", where, s)
		}
	}
	note := func(m *Model) string {
		for _, tr := range m.conv.Turns() {
			for _, n := range tr.Notes {
				if strings.Contains(n.Text, "forked at token") {
					return n.Text
				}
			}
		}
		return ""
	}

	// A fork: its status and its note.
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	orig, _, _ := forkSecondStep(t, h, eng)
	if m.focus == focusTranscript {
		t.Fatal("the fork left the focus in the inspector")
	}
	check("the fork's status", m.status.text)
	check("the fork note", note(m))
	forked := m.conv.Last()
	h.key("alt+,")
	if m.conv.Last() != orig {
		t.Fatal("alt+, from the input did not switch to the old reply")
	}
	h.key("alt+.")
	if m.conv.Last() != forked {
		t.Fatal("alt+. from the input did not switch back")
	}

	// Regenerate, and /edit before and after sending.
	h.key("ctrl+r")
	check("regenerate's status", m.status.text)
	h.idle()
	h.typeText("/edit")
	h.key("enter")
	check("/edit's status", m.status.text)
	h.key("end")
	h.typeText(" again")
	h.key("enter")
	check("the sent edit's status", m.status.text)
	h.idle()
	for _, c := range m.cmds.Commands() {
		if strings.HasPrefix(c.Usage(), "/edit") {
			check("/edit's help", c.Help)
		}
	}

	// Completion mode shows the branch as a note under the running text.
	eng = newFakeEngine()
	eng.info.Completion, eng.info.TemplateName = true, ""
	m = newTestModel(t, eng, Config{})
	h = newHarness(t, m)
	h.size(120, 40)
	forkSecondStep(t, h, eng)
	var line string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "⑂ branch 2/2") {
			line = l
		}
	}
	check("completion mode's branch note", line)
}
