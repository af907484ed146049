package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// TestRealGemma4MemoryNamesSharedLayers: with the real engine on
// synth-gemma4 (6 layers, the last two reading layers 2 and 3's caches),
// the memory panel names the KV-shared layers as vkchat info does
// ("4→2, 5→3"), at the sizes a new user tried, before and after a reply.
// Issue 45, item 14.
func TestRealGemma4MemoryNamesSharedLayers(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), testenv.Model(t, "2026/synth-gemma4-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 512, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := fmt.Sprint(s.Info().KVSharing); got != "[{4 2} {5 3}]" {
		t.Fatalf("the engine reports KV sharing %s, want [{4 2} {5 3}] (vkchat info: 4→2, 5→3)", got)
	}
	m := newTestModel(t, s, Config{MaxTokens: 4})
	h := newHarness(t, m)
	check := func(when string) {
		for _, sz := range []struct{ w, h int }{{120, 40}, {140, 45}, {160, 48}} {
			h.size(sz.w, sz.h)
			v := m.View()
			checkScreen(t, v, sz.w, sz.h)
			if !strings.Contains(v, "KV shared 2 layers, no cache: 4→2 5→3") {
				t.Errorf("%s, %dx%d: the memory panel does not name the KV-shared layers:\n%s", when, sz.w, sz.h, v)
			}
		}
	}
	check("before a reply")
	h.say("Once upon a time")
	check("after a reply")
}
