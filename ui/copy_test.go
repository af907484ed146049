package ui

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
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

// The copier writes the text as an OSC 52 sequence to the terminal and
// to the system clipboard, and fails only when both fail.
func TestOSC52Copier(t *testing.T) {
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	noTool := errors.New("no clipboard tool")
	cases := []struct {
		name    string
		out     bool
		sysErr  error
		wantHow string // "" : an error
	}{
		{"both", true, nil, "OSC 52 + system clipboard"},
		{"no clipboard tool", true, noTool, "OSC 52"},
		{"no terminal", false, nil, "system clipboard"},
		{"neither", false, noTool, ""},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		var out io.Writer
		if tc.out {
			out = &buf
		}
		var sys string
		how, err := osc52Copier(out, func(s string) error { sys = s; return tc.sysErr })("héllo")
		if tc.wantHow == "" {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil || how != tc.wantHow || sys != "héllo" {
			t.Errorf("%s: how %q, err %v, system clipboard %q", tc.name, how, err, sys)
		}
		if want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("héllo")) + "\x07"; tc.out && buf.String() != want {
			t.Errorf("%s: wrote %q, want %q", tc.name, buf.String(), want)
		}
	}
}
