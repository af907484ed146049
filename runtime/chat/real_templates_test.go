package chat

import (
	"slices"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// TestRealVocabularyTemplates renders the real chat templates stored in
// ../shared/vocab (Qwen3, Llama 3, Gemma 3, Phi-3) with a system prompt, an
// earlier answer holding reasoning, and enable_thinking both ways. The
// expected texts are Python jinja2 3.1.6's (trim_blocks, lstrip_blocks, as
// Hugging Face renders templates) on the messages llama.cpp passes: Phi-3's
// template drops the system role, so its system prompt is folded into the
// first user turn first.
func TestRealVocabularyTemplates(t *testing.T) {
	conv := []Message{{RoleSystem, "Be brief."}, {RoleUser, "Hi"}, {RoleAssistant, "<think>\nhmm\n</think>\n\nHello!"}, {RoleUser, "Again"}}
	const keptReasoning = "<think>\nhmm\n</think>\n\nHello!"
	cases := []struct {
		vocab, bos, eos string
		fold            bool
		on, off         string // enable_thinking true / false
		content         []string
	}{
		{"qwen3", "", "<|im_end|>", false,
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n",
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
			// The template keeps only the answer of an earlier turn.
			[]string{"Be brief.", "Hi", "Hello!", "Again"}},
		{"llama3", "<|begin_of_text|>", "<|eot_id|>", false,
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n<think>\nhmm\n</think>\n\nHello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAgain<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
			"", []string{"Be brief.", "Hi", keptReasoning, "Again"}},
		{"gemma3", "<bos>", "<end_of_turn>", false,
			"<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n<think>\nhmm\n</think>\n\nHello!<end_of_turn>\n<start_of_turn>user\nAgain<end_of_turn>\n<start_of_turn>model\n",
			"", []string{"Be brief.", "Hi", keptReasoning, "Again"}},
		{"phi-3", "<s>", "<|endoftext|>", true,
			"<s><|user|>\nBe brief.\nHi<|end|>\n<|assistant|>\n<think>\nhmm\n</think>\n\nHello!<|end|>\n<|user|>\nAgain<|end|>\n<|assistant|>\n",
			"", []string{"Be brief.\nHi", keptReasoning, "Again"}},
	}
	for _, tc := range cases {
		f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := f.String("tokenizer.chat_template")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := FromModel(src, "llama")
		if err != nil || tmpl.Name() != "gguf" {
			t.Fatalf("%s: %v (fell back: %s)", tc.vocab, err, tmpl.FallbackReason())
		}
		if tmpl.FoldsSystem() != tc.fold {
			t.Errorf("%s: FoldsSystem %v, want %v", tc.vocab, tmpl.FoldsSystem(), tc.fold)
		}
		off := tc.off
		if off == "" {
			off = tc.on // the template ignores enable_thinking
		}
		for _, think := range []bool{true, false} {
			want := tc.on
			if !think {
				want = off
			}
			o := Options{AddGenerationPrompt: true, BOS: tc.bos, EOS: tc.eos, DisableThinking: !think}
			segs, err := tmpl.RenderSegmentsWith(conv, o)
			if err != nil {
				t.Errorf("%s thinking=%v: %v", tc.vocab, think, err)
				continue
			}
			if got := Join(segs); got != want {
				t.Errorf("%s thinking=%v:\n got %q\nwant %q", tc.vocab, think, got, want)
			}
			if c := contentTexts(segs); !slices.Equal(c, tc.content) {
				t.Errorf("%s thinking=%v: content %q, want %q", tc.vocab, think, c, tc.content)
			}
		}
	}
}
