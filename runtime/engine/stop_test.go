package engine

import (
	"context"
	"strings"
	"testing"
)

func TestStopMatcher(t *testing.T) {
	cases := []struct {
		name   string
		stops  []string
		pieces []string
		at     int    // index of the piece that completes the match; -1 for none
		want   string // the stop string matched
	}{
		{"within one piece", []string{"park"}, []string{"in the", " park."}, 1, "park"},
		{"split over pieces", []string{"User:"}, []string{"ok\nUs", "e", "r: hi"}, 2, "User:"},
		{"the one that ends first", []string{"ball", "big"}, []string{"a big, red ball"}, 0, "big"},
		{"none", []string{"zebra"}, []string{"a big", " red ball"}, -1, ""},
		{"empty strings ignored", []string{""}, []string{"text"}, -1, ""},
		{"newline", []string{"\n\n"}, []string{"one\n", "\ntwo"}, 1, "\n\n"},
	}
	for _, tc := range cases {
		m := newStopMatcher(tc.stops)
		at, got := -1, ""
		for i, p := range tc.pieces {
			if s, ok := m.add(p); ok {
				at, got = i, s
				break
			}
		}
		if at != tc.at || got != tc.want {
			t.Errorf("%s: matched %q at piece %d, want %q at %d", tc.name, got, at, tc.want, tc.at)
		}
	}
}

// TestGenerateStopSequence: on stories260K's greedy continuation (llama.cpp's
// reference text), a stop string ends the reply at the token that
// completes it, and Done names it.
func TestGenerateStopSequence(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	ref := loadReference(t, "stories260K.p1.json")
	const stop = "park"
	cut := strings.Index(ref.Text, stop)
	if cut < 0 {
		t.Fatalf("the reference text has no %q", stop)
	}
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 100, Stop: []string{"zebra", stop}})
	if err != nil {
		t.Fatal(err)
	}
	text := pieces(evs)
	done := evs[len(evs)-1].Done
	if done == nil || done.Reason != StopSequence || done.Stop != stop {
		t.Fatalf("done %+v, want the stop sequence %q", done, stop)
	}
	// The reply is the reference up to and including the token that
	// completed the stop string, and no further.
	if !strings.HasPrefix(ref.Text, text) || len(text) < cut+len(stop) {
		t.Errorf("streamed %q, want a prefix of %q through %q", text, ref.Text, stop)
	}
	last := evs[len(evs)-2].Token.Piece
	if len(text)-len(last) >= cut+len(stop) {
		t.Errorf("the stop string was complete before the last token %q: %q", last, text)
	}
}
