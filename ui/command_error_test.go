package ui

import (
	"strings"
	"testing"
)

// TestFailedCommandClearsTheLine: a command that does not parse leaves an
// empty input, so the next command is not typed onto its end ("/foo/temp"),
// says what was wrong, and ↑ brings the line back to be corrected.
func TestFailedCommandClearsTheLine(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)

	h.typeText("/foo")
	h.key("enter")
	if v := m.input.Value(); v != "" {
		t.Fatalf("after an unknown command the input holds %q, want it empty", v)
	}
	if !m.status.err || !strings.Contains(m.status.text, `unknown command "/foo"`) || !strings.Contains(m.status.text, "↑") {
		t.Fatalf("status %+v does not name the unknown command and how to get it back", m.status)
	}

	h.typeText("/temp abc")
	h.key("enter")
	if !strings.Contains(m.status.text, `/temp: "abc" is not a number`) || strings.Contains(m.status.text, "/foo") {
		t.Fatalf("the second command was read as %q", m.status.text)
	}
	if v := m.input.Value(); v != "" {
		t.Fatalf("after a bad argument the input holds %q, want it empty", v)
	}

	h.key("up")
	if v := m.input.Value(); v != "/temp abc" {
		t.Fatalf("↑ brought back %q, want the failed line", v)
	}
	// Corrected in place, it runs.
	h.key("backspace", "backspace", "backspace")
	h.typeText("0.5")
	h.key("enter")
	if m.status.err || m.smp.Params.Temperature != 0.5 || m.input.Value() != "" {
		t.Fatalf("the corrected line: status %+v, temperature %v, input %q", m.status, m.smp.Params.Temperature, m.input.Value())
	}
	if n := len(eng.requests); n != 0 {
		t.Errorf("%d requests: a failed command must not reach the model", n)
	}
}
