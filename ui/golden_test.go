package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// The screens under testdata/TestGoldenScreens are regenerated with
//
//	go test ./ui -run TestGoldenScreens -update
func TestGoldenScreens(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newFakeEngine()
		eng.holdAfter = 14
		m := newTestModel(t, eng, Config{SystemPrompt: "You are a concise assistant."})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.typeText("Write a tiny Go program")
		h.key("enter")
		h.waitFor("14 streamed tokens", func() bool {
			r := m.conv.Last()
			return r != nil && r.Role == "assistant" && len(r.Steps) == 14
		})
		screen(t, h, name+"_streaming", sz.w, sz.h)

		close(eng.release)
		h.idle()
		screen(t, h, name+"_done", sz.w, sz.h)

		h.key("tab", "left", "left", "left")
		screen(t, h, name+"_inspect", sz.w, sz.h)

		h.key("tab", "alt+t", "alt+t", "alt+k")
		h.waitFor("the preview", func() bool { return strings.HasPrefix(m.insp.Probs.Title, "preview") && eng.previewCount() == 3 })
		screen(t, h, name+"_preview", sz.w, sz.h)
	}
}

func screen(t *testing.T, h *harness, name string, w, hgt int) {
	t.Helper()
	view := h.m.View()
	checkScreen(t, view, w, hgt)
	if strings.ContainsRune(view, '\x1b') {
		t.Errorf("%s: escape byte in an Ascii-profile screen", name)
	}
	t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(view)) })
}
