package transcript

import (
	"strings"
	"testing"

	"vkchat/ui/conversation"
	"vkchat/ui/internal/uitest"
)

func TestThinkingBlockRender(t *testing.T) {
	m := newTestTranscript(t)
	tr := &conversation.Turn{Role: "assistant"}
	for _, tk := range uitest.ThinkingTokens() {
		tr.AppendToken(tk)
	}
	folded := strings.Join(m.thinkingLines(tr, 80), "\n")
	if want := "  ▸ thought · 3 tokens · 0.6 s · ctrl+o to show"; folded != want {
		t.Errorf("folded:\n%q\nwant\n%q", folded, want)
	}
	m.ToggleThinking()
	open := m.thinkingLines(tr, 80)
	if len(open) != 2 || !strings.HasPrefix(open[0], "  ▾ thought") || open[1] != "  │ Hmm" {
		t.Errorf("expanded: %q", open)
	}
	tr.Streaming, tr.Think.Open = true, true
	if l := m.thinkingLines(tr, 80); !strings.Contains(l[0], "thinking…") {
		t.Errorf("streaming: %q", l[0])
	}
}

// TestThinkingStepIsHighlighted: a reasoning token the inspector selects
// is shown, the block opened for it if folded, highlighted, and its row is
// the one the transcript scrolls to.
func TestThinkingStepIsHighlighted(t *testing.T) {
	for _, colour := range []bool{false, true} {
		m := newTestTranscript(t)
		if colour {
			m = colourTranscript(t)
		}
		tr := &conversation.Turn{Role: "assistant"}
		for _, tk := range uitest.ThinkingTokens() {
			tr.AppendToken(tk)
		}
		if _, _, ok := tr.ThoughtSpan(0); ok {
			t.Error("the <think> tag has a span of reasoning")
		}
		lines, row := m.thinkingLinesSel(tr, 80, 1)
		if row != 1 || len(lines) != 2 || !strings.Contains(lines[1], "Hmm") {
			t.Fatalf("colour %v: selected row %d of %q, want row 1 showing Hmm", colour, row, lines)
		}
		if colour {
			want := m.styles.Selected.Render("Hmm")
			if !strings.Contains(lines[1], want) {
				t.Errorf("Hmm is not highlighted: %q", lines[1])
			}
		}
		if lines, row := m.thinkingLinesSel(tr, 80, 3); row != -1 || len(lines) != 1 {
			t.Errorf("an answer step opened the folded block: %q", lines)
		}
	}
}
