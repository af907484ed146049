package transcript

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/theme"
)

// TestSpecMarksInTheTranscript: while replies are drawn token by token
// (the inspector), a speculative reply's accepted drafts, corrected tokens
// and bonus tokens are each drawn in their own style, and a token without
// a draft in the plain one.
func TestSpecMarksInTheTranscript(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	st := theme.New(r)
	tr := newTranscript(r)
	tr.SetSize(60, 6)
	tr.SetModel("model", false)
	reply := &conversation.Turn{Role: "assistant"}
	pieces := []struct {
		text string
		fate engine.SpecFate
	}{{"plain", ""}, {" kept", engine.FateAccepted}, {" fixed", engine.FateCorrected}, {" extra", engine.FateBonus}}
	for i, p := range pieces {
		info := engine.TokenInfo{ID: int32(i + 1), Piece: p.text}
		if p.fate != "" {
			info.Spec = &engine.SpecMark{Source: "ngram", Fate: p.fate}
		}
		reply.AppendToken(info)
	}
	reply.Done = &engine.DoneInfo{}
	tr.conv.Append(&conversation.Turn{Role: "user", Content: "hi"}, reply)
	tr.SetCursor(Cursor{Inspecting: true, Turn: reply, Step: 0})
	view := tr.View()
	for _, c := range []struct {
		text  string
		style lipgloss.Style
	}{{" kept", st.SpecAccepted}, {" fixed", st.SpecCorrected}, {" extra", st.SpecBonus}} {
		if want := c.style.Render(c.text); !strings.Contains(view, want) {
			t.Errorf("%q not drawn as %q in\n%q", c.text, want, view)
		}
	}
	if strings.Contains(view, st.SpecAccepted.Render("plain")) {
		t.Errorf("a token without a draft drawn as an accepted one")
	}
}
