package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveLoadNames: /save and /load share one rule for names (a bare
// name goes with the saved chats, .json added when it has no extension; a
// path is that path), /save NAME.md writes Markdown, and /chats lists
// what /load opens.
func TestSaveLoadNames(t *testing.T) {
	state := t.TempDir()
	cwd := t.TempDir()
	t.Chdir(cwd)
	m := newTestModel(t, newFakeEngine(), Config{StateDir: state, SystemPrompt: "Be brief."})
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("hello there")
	dir := filepath.Join(state, "conversations")
	cases := []struct {
		line, file string // file: where it must land
		markdown   bool
	}{
		{"/save mychat", filepath.Join(dir, "mychat.json"), false},
		{"/save notes.md", filepath.Join(dir, "notes.md"), true},
		{"/save ./here.json", filepath.Join(cwd, "here.json"), false},
		{"/save ./here.md", filepath.Join(cwd, "here.md"), true},
	}
	for _, tc := range cases {
		h.typeText(tc.line)
		h.key("enter")
		if m.status.err {
			t.Fatalf("%s: %s", tc.line, m.status.text)
		}
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		isJSON := strings.HasPrefix(string(b), "{")
		if isJSON == tc.markdown {
			t.Errorf("%s: wrote %.40q, want markdown %v", tc.line, b, tc.markdown)
		}
		if tc.markdown {
			for _, w := range []string{"# Chat with tiny-test", "## System\n\nBe brief.", "## You\n\nhello there", "## tiny-test\n\nHere is a tiny Go program"} {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s: the Markdown lacks %q:\n%s", tc.line, w, b)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(cwd, "mychat")); err == nil {
		t.Error("/save mychat wrote ./mychat")
	}

	// /chats lists mychat; /load mychat opens it; Markdown is refused.
	h.typeText("/chats")
	h.key("enter")
	if v := m.View(); !strings.Contains(v, "/load mychat") || !strings.Contains(v, "hello there") {
		t.Errorf("/chats:\n%s", v)
	}
	h.key("esc")
	for _, tc := range []struct{ line, status string }{
		{"/load notes.md", "is Markdown"},
		{"/load mychat", "loaded " + filepath.Join(dir, "mychat.json")},
		{"/load ./here.json", "loaded ./here.json"},
	} {
		h.typeText(tc.line)
		h.key("enter")
		if !strings.Contains(m.status.text, tc.status) {
			t.Errorf("%s: status %+v, want %q", tc.line, m.status, tc.status)
		}
	}
}
