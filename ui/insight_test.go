package ui

import (
	"fmt"
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// The screens under testdata/TestGoldenInsight are regenerated with
//
//	go test ./ui -run TestGoldenInsight -update
//
// A fork with two branches (and the switch back), the funnel with the
// inspector's candidate cursor, the surprisal strip with the heatmap by
// surprisal, and a long prompt being read, at both sizes.
func TestGoldenInsight(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		forkSecondStep(t, h, eng)
		h.key("tab", "home", "right", "right")
		screen(t, h, name+"_fork", sz.w, sz.h)

		h.key("[")
		screen(t, h, name+"_switch_back", sz.w, sz.h)

		h.key("down", "down")
		screen(t, h, name+"_funnel_cursor", sz.w, sz.h)

		h.key("s", "s")
		if !heatOn(m) || !bySurprisal(m) {
			t.Fatalf("s s: heat %v by surprisal %v", heatOn(m), bySurprisal(m))
		}
		screen(t, h, name+"_surprisal", sz.w, sz.h)

		eng2 := newFakeEngine()
		eng2.progress = []engine.PrefillProgress{{Done: 384, Total: 1024, Elapsed: 1200e6}}
		eng2.holdPrefill = true
		m2 := newTestModel(t, eng2, Config{})
		h2 := newHarness(t, m2)
		h2.size(sz.w, sz.h)
		h2.typeText("Summarise this long document")
		h2.key("enter")
		h2.waitFor("the progress", func() bool { return m2.run.Progress != nil })
		screen(t, h2, name+"_prefill", sz.w, sz.h)
		close(eng2.release)
		h2.idle()
	}
}

// TestHeatBasis: s turns the heatmap on by probability, then switches it
// to surprisal and back; the colours differ between the two.
func TestHeatBasis(t *testing.T) {
	m := colourModel(t, newFakeEngine())
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hi")
	h.key("tab", "s")
	if !heatOn(m) || bySurprisal(m) {
		t.Fatalf("first s: heat %v by surprisal %v, want the heatmap on by probability", heatOn(m), bySurprisal(m))
	}
	byProb := m.View()
	h.key("s")
	if !bySurprisal(m) {
		t.Fatal("second s did not switch to surprisal")
	}
	bySurprisal := m.View()
	if byProb == bySurprisal {
		t.Error("colouring by surprisal changed nothing on screen")
	}
	if !strings.Contains(bySurprisal, "heat surprisal") {
		t.Error("the strip does not say the heatmap is by surprisal")
	}
}
