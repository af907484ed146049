package conversation

import (
	"strings"
	"testing"
	"time"

	"vkchat/runtime/engine"
	"vkchat/ui/internal/uitest"
)

func TestThinkingTurn(t *testing.T) {
	tr := &Turn{Role: "assistant", Streaming: true}
	for i, tk := range uitest.ThinkingTokens() {
		tr.AppendToken(tk)
		if open := i < 3; tr.Think.Open != open {
			t.Errorf("after token %d: open %v, want %v", i, tr.Think.Open, open)
		}
	}
	b := tr.Think
	if tr.Content != "Hi!" || b.Text != "\nHmm\n" || b.Tokens != 3 || b.Dur != 600*time.Millisecond {
		t.Errorf("content %q, thought %q, %d tokens, %v", tr.Content, b.Text, b.Tokens, b.Dur)
	}
	if tr.ModelText() != "<think>\nHmm\n</think>\n\nHi!" {
		t.Errorf("model text %q", tr.ModelText())
	}
	// Every step maps into the answer it produced (nothing for the block).
	if len(tr.Steps) != 5 || tr.Steps[2].Start != tr.Steps[2].End || tr.Content[tr.Steps[3].Start:tr.Steps[3].End] != "Hi" {
		t.Errorf("steps %+v", tr.Steps)
	}
	// A reply without reasoning stays raw text.
	plain := &Turn{Role: "assistant"}
	plain.AppendToken(engine.TokenInfo{Piece: "<b>hi</b>", Answer: "<b>hi</b>"})
	if plain.Think != nil || plain.Content != "<b>hi</b>" {
		t.Errorf("plain reply: %+v", plain)
	}
}

func TestThinkingLoaded(t *testing.T) {
	cases := []struct {
		role, saved     string
		thought, answer string // "" thought: no block
	}{
		{"assistant", "<think>\nHmm\n</think>\n\nHi!", "\nHmm\n", "Hi!"},
		{"assistant", "Hmm</think>Hi!", "Hmm", "Hi!"}, // the prompt opened the block (DeepSeek-R1)
		{"assistant", "just text with </think> in it", "just text with ", "in it"},
		{"assistant", "no block", "", "no block"},
		{"user", "<think>typed</think>", "", "<think>typed</think>"},
		// gpt-oss: the analysis channel is the reasoning, the final message the text
		{"assistant", "<|channel|>analysis<|message|>Hmm<|end|><|start|>assistant<|channel|>final<|message|>Hi!", "Hmm", "Hi!"},
	}
	for _, tc := range cases {
		tr := &Turn{Role: tc.role, Content: tc.saved}
		tr.SplitLoaded()
		thought := ""
		if tr.Think != nil {
			thought = tr.Think.Text
			if tr.Think.Raw != tc.saved {
				t.Errorf("%q: raw %q", tc.saved, tr.Think.Raw)
			}
		}
		if thought != tc.thought || tr.Content != tc.answer || tr.ModelText() != tc.saved {
			t.Errorf("%q: thought %q answer %q model text %q; want %q %q", tc.saved, thought, tr.Content, tr.ModelText(), tc.thought, tc.answer)
		}
	}
}

// TestThinkingFork: a fork keeps a prefix of the steps; a reply with
// reasoning gets its block and raw text back from them.
func TestThinkingFork(t *testing.T) {
	full := &Turn{Role: "assistant"}
	for _, tk := range uitest.ThinkingTokens() {
		full.AppendToken(tk)
	}
	for _, k := range []int{2, 4} {
		kept, ok := full.Prefix(k)
		if !ok {
			t.Fatalf("fork at %d: no prefix", k)
		}
		r := &Turn{Role: "assistant", Content: kept.Content, Steps: kept.Steps, detail: kept.detail, Think: kept.Think}
		wantRaw := strings.Join([]string{"<think>", "\nHmm\n", "</think>", "\n\nHi"}[:k], "")
		if r.Think == nil || r.Think.Raw != wantRaw || r.Think.Text != "\nHmm\n" || r.ModelText() != wantRaw {
			t.Errorf("fork at %d: %+v, model text %q; want raw %q", k, r.Think, r.ModelText(), wantRaw)
		}
		// The kept steps rebuild as they were recorded.
		for j := range k {
			got, want := mustStepInfo(t, r, j), mustStepInfo(t, full, j)
			if got.Piece != want.Piece || got.Thought != want.Thought || got.Thinking != want.Thinking {
				t.Errorf("fork at %d, step %d: %+v, want %+v", k, j, got, want)
			}
		}
	}
	plain := &Turn{Role: "assistant"}
	plain.AppendToken(engine.TokenInfo{Piece: "a"})
	plain.AppendToken(engine.TokenInfo{Piece: "b"})
	kept, ok := plain.Prefix(1)
	if !ok || kept.Think != nil || kept.Content != "a" || len(kept.Steps) != 1 {
		t.Errorf("plain reply's prefix: %+v", kept)
	}
}

// TestSetEndNoteReplaces: a reply stopped, continued and stopped again
// says "stopped" once; other notes stay.
func TestSetEndNoteReplaces(t *testing.T) {
	tr := &Turn{Role: "assistant"}
	tr.AddNote(NoteInfo, "forked at step 3", true)
	tr.SetEndNote(NoteInfo, "stopped")
	tr.SetEndNote(NoteInfo, "stopped")
	tr.SetEndNote(NoteInfo, "stopped at the 64-token limit")
	var texts []string
	for _, n := range tr.Notes {
		texts = append(texts, n.Text)
	}
	if got := strings.Join(texts, "|"); got != "forked at step 3|stopped at the 64-token limit" {
		t.Errorf("notes %q", got)
	}
}
