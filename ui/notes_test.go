package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestForkNoteEscapesOnce: a token with control bytes shows escaped once,
// as the inspector shows it (\x1B), in the cursor's hint, the fork's
// status and the note under the forked reply, never "\\x1B".
func TestForkNoteEscapesOnce(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("Write a tiny Go program")
	h.key("tab", "home", "right", "right")
	esc := eng.ids["\x1b]52;c;aGk=\x07"]
	cands := mustStepInfo(t, m.conv.Last(), 2).Candidates
	for i := 0; i < len(cands) && cands[m.insp.Cand()].ID != esc; i++ {
		h.key("down")
	}
	if cands[m.insp.Cand()].ID != esc {
		t.Fatal("the cursor never reached the escape-sequence candidate")
	}
	const want = `"\x1B]52;c;aGk=\x07"`
	if !strings.Contains(m.status.text, want) {
		t.Errorf("cursor hint %q lacks %s", m.status.text, want)
	}
	h.key("enter")
	h.idle()
	if !strings.Contains(m.status.text, want) {
		t.Errorf("fork status %q lacks %s", m.status.text, want)
	}
	var note string
	for _, n := range m.conv.Last().Notes {
		if strings.Contains(n.Text, "forked at token") {
			note = n.Text
		}
	}
	if !strings.Contains(note, want) {
		t.Errorf("fork note %q lacks %s", note, want)
	}
	if v := m.View(); strings.Contains(v, `\\x1B`) {
		t.Errorf("the screen escapes a backslash twice:\n%s", v)
	}
}

// TestModelSwitchMarksOnlyWrittenReplies: /model's note says where one
// model's replies end, so a model that wrote nothing gets none: switching
// in an empty chat adds no note, and switching again before the new model
// replied moves the earlier note on to the model now loaded.
func TestModelSwitchMarksOnlyWrittenReplies(t *testing.T) {
	engines := map[string]*fakeEngine{}
	for _, name := range []string{"second", "third", "fourth"} {
		e := newFakeEngine()
		e.info.Name = name + "-model"
		engines[name] = e
	}
	cfg := Config{OpenModel: func(_ context.Context, ref string) (Engine, error) {
		e, ok := engines[ref]
		if !ok {
			return nil, errors.New("no such model")
		}
		return e, nil
	}}
	first := newFakeEngine()
	first.genErr = errors.New("out of device memory") // its one reply fails
	m := newTestModel(t, first, cfg)
	h := newHarness(t, m)
	h.size(120, 40)
	switchTo := func(ref string) {
		t.Helper()
		h.typeText("/model " + ref)
		h.key("enter")
		h.waitFor(ref, func() bool { return m.eng == Engine(engines[ref]) })
	}
	switchNotes := func() []string {
		var out []string
		for _, tr := range m.conv.Turns() {
			for _, n := range tr.Notes {
				if strings.Contains(n.Text, "continues from here") {
					out = append(out, n.Text)
				}
			}
		}
		return out
	}

	h.typeText("hello")
	h.key("enter")
	h.idle()
	if last := m.conv.Last(); last.Role != "user" {
		t.Fatalf("the failed reply left a %s turn", last.Role)
	}
	first.genErr = nil
	switchTo("second")
	if notes := switchNotes(); len(notes) != 0 {
		t.Fatalf("tiny-test wrote nothing, yet: %q", notes)
	}
	h.say("hello again")
	switchTo("third")
	want := "the replies above are second-model's; third-model continues from here"
	if notes := switchNotes(); len(notes) != 1 || notes[0] != want {
		t.Fatalf("after second-model replied: %q, want [%q]", notes, want)
	}
	switchTo("fourth")
	want = "the replies above are second-model's; fourth-model continues from here"
	if notes := switchNotes(); len(notes) != 1 || notes[0] != want {
		t.Fatalf("third-model wrote nothing: %q, want [%q]", notes, want)
	}
	if v := m.View(); !strings.Contains(v, "fourth-model continues") || strings.Contains(v, "third-model's") {
		t.Errorf("the screen:\n%s", v)
	}
}

// TestStoppingStatusClears: "stopping the reply · ctrl+c again quits"
// lasts while the reply winds down, not after it has stopped.
func TestStoppingStatusClears(t *testing.T) {
	for _, k := range []string{"ctrl+c", "esc"} {
		eng := newFakeEngine()
		eng.holdAfter = 4
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(100, 30)
		h.typeText("hi")
		h.key("enter")
		h.waitFor("4 tokens", func() bool { return len(m.conv.Last().Steps) == 4 })
		h.key(k)
		if !strings.Contains(m.status.text, "stopping") {
			t.Fatalf("%s: status %q while stopping", k, m.status.text)
		}
		close(eng.release)
		h.idle()
		if strings.Contains(m.status.text, "stopping") || strings.Contains(m.View(), "ctrl+c again quits") {
			t.Errorf("%s: after the reply stopped the status still says %q", k, m.status.text)
		}
	}
}
