package keeper

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"testing"
)

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
		how, err := OSC52Copier(out, func(s string) error { sys = s; return tc.sysErr })("héllo")
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
