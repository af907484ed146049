package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
)

// longMarkdownReply is a reply of about 2,600 tokens: the Markdown test
// reply's blocks, numbered, twenty times over.
func longMarkdownReply() []string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "### Part %d\n\n%s\n\n", i+1, strings.Replace(markdownReply, "## Counting lines\n\n", "", 1))
		fmt.Fprintf(&b, "A paragraph long enough to wrap over several rows of the transcript, part %d, with *emphasis*, **strong** words and `code` in it, which keeps going for a while yet.\n\n", i+1)
	}
	return pieces(b.String())
}

// BenchmarkStreamToken measures what one streamed token costs the UI: the
// token is appended to the reply and the whole screen is drawn, as the
// program does for each token event. history is how many earlier
// exchanges the chat holds; the reply streams through ~2,600 tokens of
// Markdown and starts over.
//
//	go test ./ui -run '^$' -bench StreamToken -benchtime 3000x
func BenchmarkStreamToken(b *testing.B) {
	toks := longMarkdownReply()
	for _, bc := range []struct {
		name    string
		history int
		inspect bool
	}{
		{"markdown", 0, false},
		{"markdown-history100", 100, false},
		{"plain-inspect", 0, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := newModel(newFakeEngine(), Config{StateDir: b.TempDir()}, testRenderer())
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			for i := range bc.history {
				m.turns = append(m.turns, &turn{role: "user", content: fmt.Sprintf("question %d", i)},
					&turn{role: "assistant", content: markdownReply})
			}
			if bc.inspect {
				m.focus = focusTranscript
			}
			var reply *turn
			next := len(toks)
			b.ResetTimer()
			for range b.N {
				if next == len(toks) {
					reply = &turn{role: "assistant", streaming: true}
					m.turns = append(m.turns[:2*bc.history], &turn{role: "user", content: "go on"}, reply)
					next = 0
				}
				reply.appendToken(engine.TokenInfo{Piece: toks[next]})
				next++
				_ = m.View()
			}
		})
	}
}
