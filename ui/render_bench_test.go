package ui

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/internal/uitest"
)

// longMarkdownReply is a reply of about 2,600 tokens: the Markdown test
// reply's blocks, numbered, twenty times over.
func longMarkdownReply() []string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "### Part %d\n\n%s\n\n", i+1, strings.Replace(uitest.MarkdownReply, "## Counting lines\n\n", "", 1))
		fmt.Fprintf(&b, "A paragraph long enough to wrap over several rows of the transcript, part %d, with *emphasis*, **strong** words and `code` in it, which keeps going for a while yet.\n\n", i+1)
	}
	return uitest.Pieces(b.String())
}

// longCodeReply is a reply that is one fenced block of 150 lines of Go,
// about 1,500 tokens: the case where the open block is big.
func longCodeReply() []string {
	var b strings.Builder
	b.WriteString("Here it is:\n\n```go\n")
	for i := range 150 {
		fmt.Fprintf(&b, "\tx%d := compute(%d, \"str\") // step %d\n", i, i, i)
	}
	b.WriteString("```\n")
	return uitest.Pieces(b.String())
}

// BenchmarkStreamToken measures what one streamed token costs the UI: the
// token is appended to the reply and the whole screen is drawn, as the
// program does for each token event. history is how many earlier
// exchanges the chat holds; the reply streams through ~2,600 tokens of
// Markdown and starts over. colour renders in true colour (syntax
// highlighting included) instead of the tests' Ascii profile; every turns
// the debouncing of slow open blocks off.
//
//	go test ./ui -run '^$' -bench StreamToken -benchtime 3000x
func BenchmarkStreamToken(b *testing.B) {
	prose, code := longMarkdownReply(), longCodeReply()
	for _, bc := range []struct {
		name                   string
		history                int
		inspect, colour, every bool
		code                   bool
	}{
		{name: "code-colour", colour: true, code: true},
		{name: "code-colour-every", colour: true, every: true, code: true},
		{name: "markdown"},
		{name: "markdown-history100", history: 100},
		{name: "markdown-colour", colour: true},
		{name: "markdown-colour-every", colour: true, every: true},
		{name: "plain-inspect", inspect: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := testRenderer()
			if bc.colour {
				r = lipgloss.NewRenderer(io.Discard)
				r.SetColorProfile(termenv.TrueColor)
				r.SetHasDarkBackground(true)
			}
			m := newModel(newFakeEngine(), Config{StateDir: b.TempDir()}, r)
			if bc.every {
				m.tr.SetClock(nil)
			}
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			for i := range bc.history {
				m.conv.Append(&conversation.Turn{Role: "user", Content: fmt.Sprintf("question %d", i)},
					&conversation.Turn{Role: "assistant", Content: uitest.MarkdownReply})
			}
			if bc.inspect {
				m.focus = focusTranscript
			}
			toks := prose
			if bc.code {
				toks = code
			}
			var reply *conversation.Turn
			next := len(toks)
			b.ResetTimer()
			for range b.N {
				if next == len(toks) {
					for _, t := range slices.Clone(m.conv.Turns()[2*bc.history:]) {
						m.conv.Remove(t)
						m.tr.Forget(t)
					}
					reply = &conversation.Turn{Role: "assistant", Streaming: true}
					m.conv.Append(&conversation.Turn{Role: "user", Content: "go on"}, reply)
					next = 0
				}
				reply.AppendToken(engine.TokenInfo{Piece: toks[next]})
				next++
				_ = m.View()
			}
		})
	}
}
