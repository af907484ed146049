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
