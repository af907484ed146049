package transcript

import (
	"strings"
	"testing"
	"time"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// thinkingTokens is what the engine emits for "<think>\nHmm\n</think>\n\nHi!".
func thinkingTokens() []engine.TokenInfo {
	return []engine.TokenInfo{
		{Piece: "<think>", Thinking: true, Duration: 100 * time.Millisecond},
		{Piece: "\nHmm\n", Thought: "\nHmm\n", Thinking: true, Duration: 200 * time.Millisecond},
		{Piece: "</think>", Thinking: true, Duration: 300 * time.Millisecond},
		{Piece: "\n\nHi", Answer: "Hi", Duration: 400 * time.Millisecond},
		{Piece: "!", Answer: "!", Duration: 500 * time.Millisecond},
	}
}

func TestThinkingBlockRender(t *testing.T) {
	m := newTestTranscript(t)
	tr := &conversation.Turn{Role: "assistant"}
	for _, tk := range thinkingTokens() {
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
