package ui

import (
	"testing"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/internal/uitest"
)

// The screens under testdata/TestGoldenThinking are regenerated with
//
//	go test ./ui -run TestGoldenThinking -update
func TestGoldenThinking(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	m.conv.Append(&conversation.Turn{Role: "user", Content: "hello"})
	reply := &conversation.Turn{Role: "assistant"}
	for _, tk := range uitest.ThinkingTokens() {
		reply.AppendToken(tk)
	}
	reply.Done = &engine.DoneInfo{Reason: engine.StopEOS, Generated: len(reply.Steps)}
	m.conv.Append(reply)
	m.tr.Invalidate()
	screen(t, h, "80x24_folded", 80, 24)
	h.key("ctrl+o")
	screen(t, h, "80x24_shown", 80, 24)
}
