package chat

import (
	"strings"
	"testing"
)

func TestThinkSplitter(t *testing.T) {
	cases := []struct {
		name    string
		open    bool     // the prompt opened the block
		pieces  []string // the reply as streamed
		thought string
		answer  string
		flags   []bool // thinking per piece
	}{
		{"Qwen3: tags as single tokens", false,
			[]string{"<think>", "\n", "Let me", " see.", "\n", "</think>", "\n\n", "Hi", "!"},
			"\nLet me see.\n", "Hi!",
			[]bool{true, true, true, true, true, true, false, false, false}},
		{"no block", false, []string{"Hello", " <think>", " there"}, "", "Hello <think> there",
			[]bool{false, false, false}},
		{"leading blank space before the block", false, []string{"\n", "<think>", "x", "</think>", "y"}, "x", "y",
			[]bool{false, true, true, true, false}},
		{"tags split over tokens", false, []string{"<th", "ink>a", "b</th", "ink>\n", "c"}, "ab", "c",
			[]bool{false, true, true, true, false}},
		{"a prefix of the tag that is not one", false, []string{"<th", "ere"}, "", "<there", []bool{false, false}},
		{"DeepSeek-R1: the prompt opened the block", true, []string{"hmm", "</think>", "\n\nanswer"}, "hmm", "answer",
			[]bool{true, true, false}},
		{"never closed: all reasoning", true, []string{"still", " thinking", " </thi"}, "still thinking </thi", "",
			[]bool{true, true, true}},
		{"close tag and answer in one piece", false, []string{"<think>a</think>\n\nb"}, "a", "b", []bool{true}},
		{"empty block (thinking off)", false, []string{"<think>", "\n\n", "</think>", "\n\n", "ok"}, "\n\n", "ok",
			[]bool{true, true, true, false, false}},
		{"a second block is answer text", false, []string{"<think>a</think>", "b<think>c</think>"}, "a", "b<think>c</think>",
			[]bool{true, false}},
	}
	for _, tc := range cases {
		s := NewThinkSplitter(tc.open)
		var th, an strings.Builder
		for i, p := range tc.pieces {
			pt, pa, thinking := s.Add(p)
			th.WriteString(pt)
			an.WriteString(pa)
			if thinking != tc.flags[i] {
				t.Errorf("%s: piece %d %q: thinking %v, want %v", tc.name, i, p, thinking, tc.flags[i])
			}
		}
		ft, fa := s.Flush()
		th.WriteString(ft)
		an.WriteString(fa)
		if th.String() != tc.thought || an.String() != tc.answer {
			t.Errorf("%s: thought %q answer %q, want %q %q", tc.name, th.String(), an.String(), tc.thought, tc.answer)
		}
		// The whole reply at once splits the same way.
		wt, wa := SplitThinking(strings.Join(tc.pieces, ""), tc.open)
		if wt != tc.thought || wa != tc.answer {
			t.Errorf("%s: SplitThinking %q %q, want %q %q", tc.name, wt, wa, tc.thought, tc.answer)
		}
	}
}

func TestOpensThinking(t *testing.T) {
	cases := []struct {
		name string
		segs []Segment
		want bool
	}{
		{"DeepSeek-R1 generation prompt", []Segment{{Text: "<｜User｜>"}, {Text: "q", Content: true}, {Text: "<｜Assistant｜><think>\n"}}, true},
		{"Qwen3, thinking off: an empty block", []Segment{{Text: "<|im_start|>user\n"}, {Text: "q", Content: true},
			{Text: "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"}}, false},
		{"Qwen3, thinking on", []Segment{{Text: "<|im_start|>user\n"}, {Text: "q", Content: true}, {Text: "<|im_end|>\n<|im_start|>assistant\n"}}, false},
		{"a tag typed by the user does not count", []Segment{{Text: "<|im_start|>user\n"}, {Text: "<think>", Content: true},
			{Text: "<|im_end|>\n<|im_start|>assistant\n"}}, false},
	}
	for _, tc := range cases {
		if got := OpensThinking(tc.segs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
