package ui

import (
	"testing"

	"vkchat/runtime/engine"
)

// The screens under testdata/TestGoldenThinking are regenerated with
//
//	go test ./ui -run TestGoldenThinking -update
func TestGoldenThinking(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	m.turns = append(m.turns, &turn{role: "user", content: "hello"})
	reply := &turn{role: "assistant"}
	for _, tk := range thinkingTokens() {
		reply.appendToken(tk)
	}
	reply.done = &engine.DoneInfo{Reason: engine.StopEOS, Generated: len(reply.steps)}
	m.turns = append(m.turns, reply)
	m.invalidate()
	screen(t, h, "80x24_folded", 80, 24)
	h.key("ctrl+o")
	screen(t, h, "80x24_shown", 80, 24)
}
