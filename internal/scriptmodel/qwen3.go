package scriptmodel

import (
	"fmt"

	"vkchat/runtime/gguf"
)

// Qwen3Thinker is a model on the real Qwen3 vocabulary and chat template
// whose greedy reply to any conversation is
//
//	<think> Hmm </think> Hi ! <|im_end|>
//
// or, when the template pre-fills an empty block (enable_thinking=false),
// "Hi ! <|im_end|>". IDs holds the script tokens by vocabulary text.
type Qwen3Thinker struct {
	Path string
	IDs  map[string]int32
}

// Qwen3ThinkerTokens are the script's tokens by vocabulary text: Ċ ends the
// generation prompt "<|im_start|>assistant\n", ĊĊ the pre-filled
// "<think>\n\n</think>\n\n".
var Qwen3ThinkerTokens = []string{"Ċ", "ĊĊ", "<think>", "Hmm", "</think>", "Hi", "!", "<|im_end|>"}

// WriteQwen3Thinker writes the model to out with the given architecture
// ("llama" or "qwen3"), reading the vocabulary from vocabPath
// (../shared/vocab/ggml-vocab-qwen3.gguf).
func WriteQwen3Thinker(vocabPath, out, arch string) (Qwen3Thinker, error) {
	vf, err := gguf.Open(vocabPath)
	if err != nil {
		return Qwen3Thinker{}, err
	}
	defer vf.Close()
	toks, _, err := vf.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return Qwen3Thinker{}, err
	}
	index := make(map[string]int32, len(toks))
	for i, t := range toks {
		if _, dup := index[t]; !dup {
			index[t] = int32(i)
		}
	}
	ids := map[string]int32{}
	for _, s := range Qwen3ThinkerTokens {
		id, ok := index[s]
		if !ok {
			return Qwen3Thinker{}, fmt.Errorf("scriptmodel: %q is not in %s", s, vocabPath)
		}
		ids[s] = id
	}
	next, err := Chain(ids["Ċ"], ids["<think>"], ids["Hmm"], ids["</think>"], ids["Hi"], ids["!"], ids["<|im_end|>"])
	if err != nil {
		return Qwen3Thinker{}, err
	}
	next[ids["ĊĊ"]] = ids["Hi"]
	if err := Write(out, Spec{Arch: arch, Vocab: vf, Next: next, Embd: 16}); err != nil {
		return Qwen3Thinker{}, err
	}
	return Qwen3Thinker{Path: out, IDs: ids}, nil
}
