package inspector

import (
	"testing"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// replyOf is a reply of n tokens, each with its candidates kept.
func replyOf(n int) *conversation.Turn {
	r := &conversation.Turn{Role: "assistant"}
	for i := range n {
		r.AppendToken(engine.TokenInfo{ID: int32(i + 1), Piece: "t", Index: i,
			Candidates: []sample.Candidate{{ID: int32(i + 1), Prob: 0.7}, {ID: 99, Prob: 0.3}}})
	}
	return r
}

func TestNext(t *testing.T) {
	// Three replies of 3, 2 and 4 tokens.
	replies := []*conversation.Turn{replyOf(3), replyOf(2), replyOf(4)}
	tests := []struct {
		name          string
		reply, step   int // the cursor; reply -1: on a turn not among them
		delta         int
		wantR, wantK  int
		wantOK        bool
		clearedCursor bool // no cursor at all
	}{
		{name: "within a reply", reply: 1, step: 0, delta: +1, wantR: 1, wantK: 1, wantOK: true},
		{name: "back within a reply", reply: 2, step: 3, delta: -2, wantR: 2, wantK: 1, wantOK: true},
		{name: "into the next reply", reply: 1, step: 1, delta: +1, wantR: 2, wantK: 0, wantOK: true},
		{name: "into the previous reply", reply: 1, step: 0, delta: -1, wantR: 0, wantK: 2, wantOK: true},
		{name: "across a whole reply forward", reply: 0, step: 2, delta: +3, wantR: 2, wantK: 0, wantOK: true},
		{name: "across a whole reply back", reply: 2, step: 1, delta: -4, wantR: 0, wantK: 2, wantOK: true},
		{name: "stops at the last token", reply: 2, step: 3, delta: +1, wantR: 2, wantK: 3, wantOK: true},
		{name: "stops past the end", reply: 1, step: 0, delta: +50, wantR: 2, wantK: 3, wantOK: true},
		{name: "stops at the first token", reply: 0, step: 0, delta: -1, wantR: 0, wantK: 0, wantOK: true},
		{name: "stops before the start", reply: 2, step: 0, delta: -50, wantR: 0, wantK: 0, wantOK: true},
		{name: "no move", reply: 1, step: 1, delta: 0, wantR: 1, wantK: 1, wantOK: true},
		{name: "the inspected reply is not among them", reply: -1, step: 0, delta: +1},
		{name: "nothing inspected", clearedCursor: true, delta: +1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := New()
			switch {
			case tc.clearedCursor:
			case tc.reply < 0:
				in.Show(replyOf(2), tc.step, true)
			default:
				if !in.Show(replies[tc.reply], tc.step, true) {
					t.Fatalf("cursor not set on reply %d step %d", tc.reply, tc.step)
				}
			}
			turn, k, ok := in.Next(tc.delta, replies)
			if ok != tc.wantOK {
				t.Fatalf("ok %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				if turn != nil {
					t.Errorf("a turn came back without ok: %p", turn)
				}
				return
			}
			if turn != replies[tc.wantR] || k != tc.wantK {
				got := -1
				for i, r := range replies {
					if r == turn {
						got = i
					}
				}
				t.Errorf("Next(%d) from reply %d step %d = reply %d step %d, want reply %d step %d",
					tc.delta, tc.reply, tc.step, got, k, tc.wantR, tc.wantK)
			}
			// Next only says where to go: the cursor stays until Show.
			if tc.reply >= 0 && (in.Turn() != replies[tc.reply] || in.Step() != tc.step) {
				t.Error("Next moved the cursor")
			}
		})
	}
}
