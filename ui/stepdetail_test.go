package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// mustStepInfo is step k of t as the engine reported it; the test fails
// when the turn no longer keeps its detail.
func mustStepInfo(t *testing.T, tr *conversation.Turn, k int) engine.TokenInfo {
	t.Helper()
	info, ok := tr.StepInfo(k)
	if !ok {
		t.Fatalf("step %d: details not kept", k)
	}
	return info
}

// TestInspectOldReply: on a reply older than the ones that keep detail
// the inspector walks the tokens and says "details not kept"; ↑/↓, Enter
// and /export explain instead of failing, and a recent reply still forks.
func TestInspectOldReply(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	for i := range conversation.DetailReplies + 2 {
		h.say("Question " + string(rune('A'+i)))
	}
	rs := m.conv.Replies()
	if len(rs) != conversation.DetailReplies+2 {
		t.Fatalf("%d replies", len(rs))
	}
	for i, r := range rs {
		if want := i >= len(rs)-conversation.DetailReplies; r.HasDetail() != want {
			t.Errorf("reply %d: detail kept %v, want %v", i+1, r.HasDetail(), want)
		}
	}
	h.key("tab")
	m.showStep(rs[0], 1, true)
	if !strings.Contains(m.insp.Probs.Title, "details not kept") || len(m.insp.Probs.Candidates) != 0 {
		t.Fatalf("old reply's panel: %+v", m.insp.Probs)
	}
	if v := m.View(); !strings.Contains(v, "details not kept") || !strings.Contains(v, "only the 4 newest") || strings.Contains(v, "no token sampled yet") {
		t.Errorf("screen does not say the details were not kept:\n%s", v)
	}
	h.key("down", "down")
	if !strings.Contains(m.status.text, "details not kept") {
		t.Errorf("↓ on an old reply: status %q", m.status.text)
	}
	turns := len(m.conv.Turns())
	h.key("enter")
	if m.gen != nil || len(m.conv.Turns()) != turns || !strings.Contains(m.status.text, "details not kept") {
		t.Errorf("Enter on an old reply: generating %v, %d turns (was %d), status %q", m.gen != nil, len(m.conv.Turns()), turns, m.status.text)
	}
	// Moving along still works, into the replies that kept their detail.
	m.showStep(rs[0], len(rs[0].Steps)-1, true)
	for range len(rs[1].Steps) * 2 {
		h.key("right")
	}
	if m.insp.Turn() == rs[0] || m.insp.Turn() == nil {
		t.Fatalf("inspector stuck on the old reply")
	}
	m.showStep(rs[0], 0, true) // /export writes the inspected reply
	if c, err := m.cmds.Parse("/export " + filepath.Join(t.TempDir(), "old.jsonl")); err != nil {
		t.Fatal(err)
	} else {
		c.Run()
	}
	if !strings.Contains(m.status.text, "details not kept") {
		t.Errorf("/export of an old reply: status %q", m.status.text)
	}
}
