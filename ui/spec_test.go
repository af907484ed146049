package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// TestSpecCommand: /spec says what is in use, switches the source and
// the most tokens a round drafts, and names what is wrong with a bad
// argument or a source the engine refuses.
func TestSpecCommand(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	run := func(line string) {
		h.typeText(line)
		h.key("enter")
	}
	run("/spec")
	if m.status.err || !strings.Contains(m.status.text, "speculative decoding: off") {
		t.Errorf("/spec: %+v", m.status)
	}
	run("/spec ngram 4")
	if got := eng.Spec(); got.Mode != engine.SpecNgram || got.Max != 4 || m.status.err || !strings.Contains(m.status.text, "ngram (at most 4 tokens a round)") {
		t.Errorf("/spec ngram 4: %+v, status %+v", got, m.status)
	}
	run("/spec off")
	if got := eng.Spec(); got.Mode != engine.SpecOff || got.Max != 4 {
		t.Errorf("/spec off: %+v (the length is kept)", got)
	}
	for _, c := range []struct{ line, want string }{
		{"/spec fast", `unknown speculative mode "fast"`},
		{"/spec ngram -1", "0 (automatic) or more"},
		{"/spec ngram 2 3", "/spec off|ngram|draft|mtp [N]"},
	} {
		run(c.line)
		if !m.status.err || !strings.Contains(m.status.text, c.want) {
			t.Errorf("%s: status %+v, want an error with %q", c.line, m.status, c.want)
		}
	}
	eng.specErr = errors.New("--spec draft: no draft model: give one with --draft FILE")
	run("/spec draft")
	if !m.status.err || !strings.Contains(m.status.text, "--draft FILE") || eng.Spec().Mode != engine.SpecOff {
		t.Errorf("refused: status %+v, spec %+v", m.status, eng.Spec())
	}
}

// The screens under testdata/TestGoldenSpec show a reply written with a
// draft model: the speed panel's acceptance and tokens per verification,
// and the inspector on a corrected token (the draft's distribution beside
// the target's, the rejected draft marked) and on an accepted one.
// Regenerate with go test ./ui -run TestGoldenSpec -update.
func TestGoldenSpec(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newFakeEngine()
		eng.spec = engine.SpecOptions{Mode: engine.SpecDraft, Draft: "/models/tiny-draft.gguf"}
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.typeText("Write a tiny Go program")
		h.key("enter")
		close(eng.release)
		h.idle()
		r := m.conv.Last()
		if r == nil || len(r.Steps) < 12 {
			t.Fatalf("reply of %d steps", len(r.Steps))
		}
		// the cursor starts on the last token; step 10 (index 9) is the
		// first corrected one, 9 an accepted one
		h.key("tab")
		for range len(r.Steps) - 10 {
			h.key("left")
		}
		if f := r.Steps[m.insp.Step()].Spec(); f != engine.FateCorrected {
			t.Fatalf("step %d is %q, want a corrected one", m.insp.Step(), f)
		}
		screen(t, h, name+"_corrected", sz.w, sz.h)
		h.key("left")
		screen(t, h, name+"_accepted", sz.w, sz.h)
	}
}
