package ui

import (
	"fmt"
	"strings"
	"testing"
	"vkchat/ui/internal/uitest"

	"github.com/charmbracelet/x/exp/golden"
)

// The transcript draws Markdown, falls back to plain text (each token in
// its place) in the inspector and the heatmap, and back again after.
func TestTranscriptMarkdownAndInspectorFallback(t *testing.T) {
	eng := newFakeEngine()
	eng.replies = [][]string{uitest.Pieces(uitest.MarkdownReply)}
	for _, p := range eng.replies[0] {
		eng.id(p)
	}
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 60)
	h.say("How do I count lines?")
	view := m.View()
	if strings.Contains(view, "```go") || !strings.Contains(view, "• count the newlines") {
		t.Fatalf("reply not drawn as Markdown:\n%s", view)
	}
	h.key("tab")
	view = m.View()
	if !strings.Contains(view, "```go") || !strings.Contains(view, "- count the newlines") {
		t.Fatalf("inspector does not show the raw tokens:\n%s", view)
	}
	h.key("h", "tab")
	if view = m.View(); !strings.Contains(view, "```go") {
		t.Fatalf("heatmap left on but the reply is drawn as Markdown:\n%s", view)
	}
	h.key("tab", "h", "tab")
	if view = m.View(); strings.Contains(view, "```go") {
		t.Fatalf("Markdown not restored after the inspector:\n%s", view)
	}
}

// Golden screens of a Markdown reply, mid-stream (inside the code block)
// and finished. Regenerate with go test ./ui -run TestGoldenMarkdown -update
func TestGoldenMarkdown(t *testing.T) {
	toks := uitest.Pieces(uitest.MarkdownReply)
	hold := 0
	for i := range toks {
		if strings.Contains(strings.Join(toks[:i], ""), "bytes.Count") {
			hold = i
			break
		}
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newFakeEngine()
		eng.replies = [][]string{toks}
		for _, p := range toks {
			eng.id(p)
		}
		eng.holdAfter = hold
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.typeText("How do I count lines?")
		h.key("enter")
		h.waitFor("the code block to stream", func() bool {
			r := m.conv.Last()
			return r != nil && r.Role == "assistant" && len(r.Steps) == hold
		})
		markdownScreen(t, h, name+"_streaming", sz.w, sz.h)
		close(eng.release)
		h.idle()
		markdownScreen(t, h, name+"_done", sz.w, sz.h)
	}
}

func markdownScreen(t *testing.T, h *harness, name string, w, hgt int) {
	t.Helper()
	view := h.m.View()
	checkScreen(t, view, w, hgt)
	if strings.ContainsRune(view, '\x1b') {
		t.Errorf("%s: escape byte in an Ascii-profile screen", name)
	}
	t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(view)) })
}
