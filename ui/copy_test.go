package ui

import (
	"strings"
	"testing"
)

// TestCopyCommand: /copy takes the last reply, a code block of it, or the
// whole chat, and hands exactly that text to the clipboard.
func TestCopyCommand(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	var got []string
	m.copy = func(s string) (string, error) { got = append(got, s); return "OSC 52", nil }
	h := newHarness(t, m)
	h.size(120, 40)
	h.typeText("/copy")
	h.key("enter")
	if !m.status.err || !strings.Contains(m.status.text, "no reply") {
		t.Errorf("before any reply: status %+v", m.status)
	}
	h.say("show me code") // the fake's first reply holds one Go block
	const reply = "Here is a tiny Go program that prints a greeting:\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\nIt prints hi."
	cases := []struct {
		line, want, status string // want "" : an error saying status
	}{
		{"/copy", reply, "copied the last reply"},
		{"/copy code", "func main() {\n\tprintln(\"hi\")\n}", "copied code block 1 of 1"},
		{"/copy code 1", "func main() {\n\tprintln(\"hi\")\n}", "code block 1 of 1"},
		{"/copy code 2", "", "has 1 code block; pick 1 to 1"},
		{"/copy everything", "", "/copy takes nothing, code, code N or all"},
		{"/copy all", "", ""},
	}
	for _, tc := range cases {
		before := len(got)
		h.typeText(tc.line)
		h.key("enter")
		switch {
		case tc.line == "/copy all":
			if len(got) != before+1 || !strings.Contains(got[before], "## You\n\nshow me code") || !strings.Contains(got[before], "It prints hi.") {
				t.Errorf("/copy all copied %q", got[before:])
			}
		case tc.want == "":
			if len(got) != before || !m.status.err || !strings.Contains(m.status.text, tc.status) {
				t.Errorf("%s: copied %q, status %+v, want an error saying %q", tc.line, got[before:], m.status, tc.status)
			}
		default:
			if len(got) != before+1 || got[before] != tc.want || !strings.Contains(m.status.text, tc.status) {
				t.Errorf("%s: copied %q (status %+v), want %q", tc.line, got[before:], m.status, tc.want)
			}
		}
	}
}
