package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// coreItems are the four things vkchat exists to show, each as a pattern
// that matches both the full panels and the compact rows.
var coreItems = []struct {
	what string
	re   *regexp.Regexp
}{
	{"prefill time or first token", regexp.MustCompile(`(prefill|first tok|ttft) +\d`)},
	{"tokens per second", regexp.MustCompile(`\d+\.\d tok/s`)},
	{"KV-cache memory", regexp.MustCompile(`KV( used)? +[\d.]+ [KMG]?i?B`)},
	{"context fill", regexp.MustCompile(`(ctx|context) .*\d+/2048`)},
	{"top-k distribution", regexp.MustCompile(`␣the +(\S+ +)?\d+\.\d%`)},
}

// TestEverySizeShowsTheCore: from 80×24 to 240×70, after a reply and while
// inspecting it, with the optional panels shown and hidden (f2), the
// screen shows each core item.
// Regenerate the goldens with go test ./ui -run TestEverySizeShowsTheCore -update.
func TestEverySizeShowsTheCore(t *testing.T) {
	sizes := []struct{ w, h int }{
		{80, 24}, {100, 24}, {120, 24}, {120, 30}, {120, 34}, {132, 30}, {140, 45}, {160, 48}, {200, 30}, {240, 70},
	}
	for _, sz := range sizes {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("Write a tiny Go program")
		check := func(state string) string {
			t.Helper()
			view := checkLayout(t, m, name+" "+state, sz.w, sz.h)
			for _, c := range coreItems {
				if !c.re.MatchString(view) {
					t.Errorf("%s %s: no %s on screen:\n%s", name, state, c.what, view)
				}
			}
			return view
		}
		done := check("done")
		t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(done)) })
		h.key("tab", "left", "left", "left")
		check("inspecting")
		h.key("f2")
		hidden := check("optional panels hidden")
		if m.frame.split > 0 && (strings.Contains(hidden, "Sampler funnel") || strings.Contains(hidden, "Latency")) {
			t.Errorf("%s: f2 left the optional panels on screen", name)
		}
		h.key("f2")
	}
}
