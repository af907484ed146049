package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestNewChatResetsContextFill: after ctrl+n the empty chat shows no
// context filled and no KV cache used, in the side panels (wide) and in
// the status bar (narrow), at the sizes a new user tried; the cache's
// allocation stays. Issue 45, item 12.
func TestNewChatResetsContextFill(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {140, 45}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := newTestModel(t, newFakeEngine(), Config{})
			h := newHarness(t, m)
			h.size(sz.w, sz.h)
			h.say("Write a tiny Go program")
			used := m.stats.ContextUsed
			if used == 0 {
				t.Fatal("the reply filled no context: nothing to reset")
			}
			filled := fmt.Sprintf("%d/%d", used, m.contextSize())
			if v := m.View(); !strings.Contains(v, filled) {
				t.Fatalf("the reply's context fill %s is not on screen:\n%s", filled, v)
			}
			h.key("ctrl+n")
			v := m.View()
			if strings.Contains(v, filled) {
				t.Errorf("the new chat still shows the last chat's context fill %s:\n%s", filled, v)
			}
			if empty := fmt.Sprintf("0/%d", m.contextSize()); !strings.Contains(v, empty) {
				t.Errorf("the new chat does not show %s of context filled:\n%s", empty, v)
			}
			kvUsed := regexp.MustCompile(`KV used +0 B|KV 0 B/`)
			if !kvUsed.MatchString(v) {
				t.Errorf("the new chat does not show an empty KV cache:\n%s", v)
			}
			if m.stats.KVAllocated == 0 {
				t.Error("ctrl+n forgot the KV cache's allocation")
			}
		})
	}
}
