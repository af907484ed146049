package transcript

import (
	"io"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/ui/conversation"
	"vkchat/ui/theme"
)

// testRenderer draws without colour so rows compare as plain text.
func testRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return r
}

// newTranscript is the transcript of an empty chat drawn by r, with the
// settings the chat gives it.
func newTranscript(r *lipgloss.Renderer) *Transcript {
	tr := New(conversation.New(false, ""), theme.New(r), r, Options{SavedIn: "/tmp/conversations", ThinkingKey: "ctrl+o"})
	return &tr
}

// newTestTranscript draws without colour, every token of a streaming
// reply whatever the machine's speed.
func newTestTranscript(t *testing.T) *Transcript {
	t.Helper()
	tr := newTranscript(testRenderer())
	tr.SetClock(nil)
	return tr
}

// colourTranscript draws in true colour on a dark background.
func colourTranscript(t *testing.T) *Transcript {
	t.Helper()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	return newTranscript(r)
}
