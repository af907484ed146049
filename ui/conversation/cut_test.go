package conversation

import "testing"

func TestCutAnswer(t *testing.T) {
	cases := []struct {
		name         string
		content, raw string // raw "" : no reasoning block
		stop         string
		wantContent  string
		wantRaw      string
		found        bool
	}{
		{"token past the stop", "Hi.\nUser: more", "", "User:", "Hi.\n", "", true},
		{"the last occurrence", "a\n\nb\n\nc", "", "\n\n", "a\n\nb", "", true},
		{"after reasoning", "Hi.\nUser:", "<think>x</think>Hi.\nUser:", "User:", "Hi.\n", "<think>x</think>Hi.\n", true},
		{"not there", "Hi.", "", "User:", "Hi.", "", false},
	}
	for _, tc := range cases {
		tr := &Turn{Role: "assistant", Content: tc.content, Steps: []Step{{Start: 0, End: int32(len(tc.content))}}}
		if tc.raw != "" {
			tr.Think = &ThinkBlock{Raw: tc.raw, Text: "x"}
		}
		if got := tr.CutAnswer(tc.stop); got != tc.found {
			t.Errorf("%s: found %v", tc.name, got)
		}
		if tr.Content != tc.wantContent || (tc.raw != "" && tr.Think.Raw != tc.wantRaw) {
			t.Errorf("%s: content %q raw %q, want %q %q", tc.name, tr.Content, tr.ModelText(), tc.wantContent, tc.wantRaw)
		}
		if e := tr.Steps[0].End; int(e) > len(tr.Content) {
			t.Errorf("%s: step ends at %d past the content (%d)", tc.name, e, len(tr.Content))
		}
	}
}
