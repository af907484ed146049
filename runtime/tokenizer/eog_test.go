package tokenizer

import (
	"slices"
	"testing"
)

// TestEOGRealVocabularies holds the end-of-generation set of the real
// vocabularies to llama.cpp's, as its loader lists them ("print_info: EOG
// token = ..."): the metadata's eos/eot/eom, the FIM pad/repo/separator
// tokens, and the end-of-turn family it adds by text.
func TestEOGRealVocabularies(t *testing.T) {
	cases := []struct {
		vocab string
		eog   []string // by text, so the test says which tokens and why
		not   []string // look alike or sit beside them, but do not end a turn
	}{
		// llama.cpp adds "</s>" by text (for paddleocr), and Qwen's BPE
		// vocabulary and Gemma 3's both hold a plain "</s>" token, so
		// llama.cpp stops there too.
		{"qwen3", []string{"<|endoftext|>", "<|im_end|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "</s>"},
			[]string{"<|im_start|>", "<think>", "</think>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<tool_call>"}},
		// Llama 3.0: <|eom_id|> came with 3.1.
		{"llama3", []string{"<|end_of_text|>", "<|eot_id|>"},
			[]string{"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|python_tag|>"}},
		{"gemma3", []string{"<eos>", "<end_of_turn>", "</s>"},
			[]string{"<bos>", "<start_of_turn>", "<pad>"}},
		// gpt-oss: <|end|> closes a message, not the answer; it is the EOT
		// id llama.cpp takes from the text but then drops from the set.
		{"gptoss", []string{"<|endoftext|>", "<|return|>", "<|call|>"},
			[]string{"<|end|>", "<|start|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|startoftext|>"}},
	}
	for _, c := range cases {
		tk := load(t, c.vocab)
		want := make([]int32, 0, len(c.eog))
		for _, s := range c.eog {
			want = append(want, id(t, tk, s))
		}
		slices.Sort(want)
		got := tk.EOGs()
		if !slices.Equal(got, want) {
			names := make([]string, len(got))
			for i, g := range got {
				names[i] = tk.TokenText(g)
			}
			t.Errorf("%s: EOG set %v %q, want %v %q", c.vocab, got, names, want, c.eog)
		}
		for _, w := range want {
			if !tk.IsEOG(w) || !tk.IsControl(w) {
				t.Errorf("%s: %q should be a control EOG token", c.vocab, tk.TokenText(w))
			}
		}
		for _, s := range c.not {
			if x, ok := tk.TokenID(s); ok && tk.IsEOG(x) {
				t.Errorf("%s: %q must not end generation", c.vocab, s)
			}
		}
		// The turn end the chat templates print is what generation stops at.
		if eos := tk.EOS(); eos >= 0 && !tk.IsEOG(eos) {
			t.Errorf("%s: EOS %d is not EOG", c.vocab, eos)
		}
	}
}
