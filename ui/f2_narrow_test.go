package ui

import (
	"fmt"
	"strings"
	"testing"
)

// TestF2HidesTheNarrowOptionalRows: below the side column's width, f2's
// "optional panels hidden" hides what stands for them there, the status
// bar's sampler row (or its funnel while inspecting) and the router
// panel over it, and gives their rows to the transcript; the core rows
// stay and f2 again brings them back. Issue 45, item 22.
func TestF2HidesTheNarrowOptionalRows(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {90, 30}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := newTestModel(t, newMoEFakeEngine(), Config{})
			h := newHarness(t, m)
			h.size(sz.w, sz.h)
			h.say("Write a tiny Go program")
			before := m.View()
			for _, want := range []string{"temp 0.80", "router · step"} {
				if !strings.Contains(before, want) {
					t.Fatalf("no %q on the narrow screen before f2:\n%s", want, before)
				}
			}
			trBefore := m.layout().transcriptH
			h.key("f2")
			v := m.View()
			if !strings.Contains(v, "optional panels hidden") {
				t.Fatalf("f2 did not say it hid the panels:\n%s", v)
			}
			for _, gone := range []string{"temp 0.80", "router · step"} {
				if strings.Contains(v, gone) {
					t.Errorf("f2 says the optional panels are hidden, %q stays:\n%s", gone, v)
				}
			}
			for _, core := range []string{"tok/s", "ttft ", "ctx ", "KV ", "59.1%"} {
				if strings.Contains(before, core) && !strings.Contains(v, core) {
					t.Errorf("f2 hid the core figure %q:\n%s", core, v)
				}
			}
			if got := m.layout().transcriptH; got <= trBefore {
				t.Errorf("the transcript keeps %d rows after f2 (%d before): the hidden rows went to nothing", got, trBefore)
			}
			h.key("tab")
			if v := m.View(); strings.Contains(v, "funnel ") || strings.Contains(v, "router · ") {
				t.Errorf("the funnel row or the router shows while inspecting with the panels hidden:\n%s", v)
			}
			h.key("esc", "f2")
			if v := m.View(); !strings.Contains(v, "temp 0.80") || !strings.Contains(v, "router · step") {
				t.Errorf("f2 again does not bring the optional rows back:\n%s", v)
			}
		})
	}
}
