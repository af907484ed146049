package ui

import (
	"strings"
	"testing"

	"vkchat/ui/conversation"
)

func userTexts(ts []*conversation.Turn) []string {
	var out []string
	for _, t := range ts {
		if t.Role == "user" {
			out = append(out, t.Content)
		}
	}
	return out
}

// TestEditAndResend: /edit N puts an earlier message in the input; sending
// it makes a new branch at that message with a new reply, the old message
// and what followed it kept as the other branch.
func TestEditAndResend(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("first")
	h.say("second")
	for _, tc := range []struct{ line, err string }{
		{"/edit 3", "1 to 2"},
		{"/edit x", "1 to 2"},
	} {
		h.typeText(tc.line)
		h.key("enter")
		if !m.status.err || !strings.Contains(m.status.text, tc.err) {
			t.Errorf("%s: status %+v", tc.line, m.status)
		}
		h.key("ctrl+u")
	}
	h.typeText("/edit 1")
	h.key("enter")
	if m.input.Value() != "first" || m.edit == nil {
		t.Fatalf("/edit 1: input %q", m.input.Value())
	}
	h.key("esc")
	if m.edit != nil || m.input.Value() != "" {
		t.Fatalf("esc did not cancel the edit")
	}
	h.typeText("/edit 1")
	h.key("enter")
	h.key("ctrl+u")
	h.say("FIRST, edited")
	ts := m.conv.Turns()
	if got := userTexts(ts); len(got) != 1 || got[0] != "FIRST, edited" {
		t.Fatalf("after the edit the path holds %q", got)
	}
	if len(ts) != 2 || ts[1].Role != "assistant" || ts[1].Content == "" {
		t.Fatalf("no reply to the edited message: %d turns", len(ts))
	}
	if k, n, ok := ts[0].BranchPos(); !ok || k != 2 || n != 2 {
		t.Errorf("the edited message is alternative %d of %d (%v), want 2 of 2", k, n, ok)
	}
	if req := eng.requests[len(eng.requests)-1]; len(req.Messages) != 1 || req.Messages[0].Content != "FIRST, edited" {
		t.Errorf("the reply was asked for %+v", req.Messages)
	}
	// The save keeps both branches.
	f, err := conversation.Read(m.conv.Path(), m.smp.Params)
	if err != nil || len(f.Nodes) < 5 || f.Messages[0].Content != "FIRST, edited" {
		t.Errorf("saved %d nodes, messages %+v, err %v; want both branches", len(f.Nodes), f.Messages, err)
	}
	// [ goes back to the original, with everything after it.
	h.key("alt+,")
	if got := userTexts(m.conv.Turns()); len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Errorf("the old branch holds %q", got)
	}
}
