package ui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// The screens under testdata/TestGoldenRouterBesideMemory are regenerated with
//
//	go test ./ui -run TestGoldenRouterBesideMemory -update
//
// At 120×40 and 140×45 the MoE model's memory panel, with its three
// formulas, took the rows the router panel needed, so the router went
// (issue 45, item 10). The memory panel now gives up formulas first.
func TestGoldenRouterBesideMemory(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {140, 45}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		m := newTestModel(t, newMoEFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("Write a tiny Go program")
		v := m.View()
		for _, want := range []string{"Router · step 34 · 2 of 8 experts", "L3 ", "Memory ─", "active "} {
			if !strings.Contains(v, want) {
				t.Errorf("%s: no %q on screen:\n%s", name, want, v)
			}
		}
		screen(t, h, name+"_router", sz.w, sz.h)
	}
}

// TestRealGPTOSSRouterAtEverySize: the real engine on synth-gpt-oss (4
// layers, 4 of 8 experts): the router panel shows every layer at the sizes
// a new user tried, beside the full memory panel where both fit, and f2
// hides it again. Issue 45, item 10.
func TestRealGPTOSSRouterAtEverySize(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), testenv.Model(t, "2026/synth-gpt-oss-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 512, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 6})
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("Once upon a time")
	layers := regexp.MustCompile(`(?m)\bL[0-3] [·▁▂▃▄▅▆▇█]{8} #\d`)
	for _, sz := range []struct{ w, h int }{{80, 24}, {100, 30}, {120, 40}, {140, 45}, {200, 60}} {
		h.size(sz.w, sz.h)
		v := m.View()
		checkScreen(t, v, sz.w, sz.h)
		if !strings.Contains(strings.ToLower(v), "router · step 6 · 4 of 8 experts") {
			t.Errorf("%dx%d: no router panel:\n%s", sz.w, sz.h, v)
			continue
		}
		if n := len(layers.FindAllString(v, -1)); n != 4 {
			t.Errorf("%dx%d: the router panel shows %d of 4 layers:\n%s", sz.w, sz.h, n, v)
		}
		if sz.w == 200 && !strings.Contains(v, "weights = active") {
			t.Errorf("200x60 has room for the memory panel's formulas and the router, but dropped the formulas:\n%s", v)
		}
	}
	h.size(140, 45)
	h.key("f2")
	if v := m.View(); strings.Contains(v, "Router") || !strings.Contains(v, "weights = active") {
		t.Errorf("f2 leaves the router or does not give the memory panel its formulas back:\n%s", v)
	}
}
