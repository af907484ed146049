package tokenizer

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/gguf"
)

func spmBase() map[string]any {
	return map[string]any{
		"tokenizer.ggml.model":      "llama",
		"tokenizer.ggml.tokens":     []string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "ab"},
		"tokenizer.ggml.scores":     []float32{0, 0, 0, -1, -2, -2, -0.5, -0.7},
		"tokenizer.ggml.token_type": []int32{2, 3, 3, 1, 1, 1, 1, 1},
	}
}

func bpeBase() map[string]any {
	return map[string]any{
		"tokenizer.ggml.model":  "gpt2",
		"tokenizer.ggml.pre":    "gpt-2",
		"tokenizer.ggml.tokens": []string{"a", "b", "c", "ab", "bc", "abc"},
		"tokenizer.ggml.merges": []string{"b c", "a b", "a bc"},
	}
}

// build writes kv as a GGUF file and loads it; keys are written in sorted
// order so failures reproduce.
func build(t *testing.T, kv map[string]any) (*Tokenizer, error) {
	t.Helper()
	w := gguf.NewWriter()
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		w.Set(k, kv[k])
	}
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return FromGGUF(f)
}

func with(base map[string]any, set map[string]any, del ...string) map[string]any {
	m := maps.Clone(base)
	maps.Copy(m, set)
	for _, k := range del {
		delete(m, k)
	}
	return m
}

func TestFromGGUFErrors(t *testing.T) {
	cases := []struct {
		name string
		kv   map[string]any
		want []string // substrings of the error
	}{
		{"no model", with(spmBase(), nil, "tokenizer.ggml.model"), []string{"tokenizer.ggml.model", "missing"}},
		{"unknown model", with(spmBase(), map[string]any{"tokenizer.ggml.model": "bert"}), []string{"tokenizer.ggml.model", `"bert"`, "llama", "gpt2"}},
		{"model not a string", with(spmBase(), map[string]any{"tokenizer.ggml.model": uint32(1)}), []string{"tokenizer.ggml.model", "string"}},
		{"no tokens", with(spmBase(), nil, "tokenizer.ggml.tokens"), []string{"tokenizer.ggml.tokens", "missing"}},
		{"tokens not strings", with(spmBase(), map[string]any{"tokenizer.ggml.tokens": []int32{1, 2, 3}}), []string{"tokenizer.ggml.tokens", "array of strings", "int32"}},
		{"tokens empty", with(spmBase(), map[string]any{"tokenizer.ggml.tokens": []string{}}), []string{"tokenizer.ggml.tokens", "empty"}},
		{"scores as uint8", with(spmBase(), map[string]any{"tokenizer.ggml.scores": []uint8{0, 0, 0, 0, 0, 0, 0, 0}}), []string{"tokenizer.ggml.scores", "float32", "uint8"}},
		{"scores short", with(spmBase(), map[string]any{"tokenizer.ggml.scores": []float32{0, 0, 0}}), []string{"tokenizer.ggml.scores", "3 entries for 8 tokens"}},
		{"scores long", with(spmBase(), map[string]any{"tokenizer.ggml.scores": make([]float32, 9)}), []string{"tokenizer.ggml.scores", "9 entries for 8 tokens"}},
		{"types as float", with(spmBase(), map[string]any{"tokenizer.ggml.token_type": make([]float32, 8)}), []string{"tokenizer.ggml.token_type", "int32", "float32"}},
		{"types short", with(spmBase(), map[string]any{"tokenizer.ggml.token_type": []int32{1}}), []string{"tokenizer.ggml.token_type", "1 entries for 8 tokens"}},
		{"bos out of range", with(spmBase(), map[string]any{"tokenizer.ggml.bos_token_id": uint32(99)}), []string{"tokenizer.ggml.bos_token_id", "99", "8 tokens"}},
		{"eos equal to size", with(spmBase(), map[string]any{"tokenizer.ggml.eos_token_id": uint32(8)}), []string{"tokenizer.ggml.eos_token_id", "outside"}},
		{"pad out of range", with(spmBase(), map[string]any{"tokenizer.ggml.padding_token_id": uint64(1 << 40)}), []string{"tokenizer.ggml.padding_token_id"}},
		{"unk not a number", with(spmBase(), map[string]any{"tokenizer.ggml.unknown_token_id": "0"}), []string{"tokenizer.ggml.unknown_token_id"}},
		{"negative eot", with(spmBase(), map[string]any{"tokenizer.ggml.eot_token_id": int32(-1)}), []string{"tokenizer.ggml.eot_token_id", "negative"}},
		{"add_bos not a bool", with(spmBase(), map[string]any{"tokenizer.ggml.add_bos_token": uint8(1)}), []string{"tokenizer.ggml.add_bos_token", "bool"}},
		{"add_bos without bos", map[string]any{"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": []string{"x"}},
			[]string{"tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id"}},
		{"add_eos without eos", with(bpeBase(), map[string]any{"tokenizer.ggml.add_eos_token": true}),
			[]string{"tokenizer.ggml.add_eos_token", "tokenizer.ggml.eos_token_id"}},
		{"duplicate token", with(spmBase(), map[string]any{"tokenizer.ggml.tokens": []string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "a"}}), []string{"duplicate", `"a"`, "4", "7"}},
		{"byte token <0xZZ>", with(spmBase(), map[string]any{"tokenizer.ggml.tokens": []string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "<0xZZ>"}, "tokenizer.ggml.token_type": []int32{2, 3, 3, 1, 1, 1, 1, 6}}), []string{"tokenizer.ggml.tokens", "<0xZZ>", "byte"}},
		{"byte token <0x-1>", with(spmBase(), map[string]any{"tokenizer.ggml.tokens": []string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "<0x-1>"}, "tokenizer.ggml.token_type": []int32{2, 3, 3, 1, 1, 1, 1, 6}}), []string{"<0x-1>"}},
		{"bpe without merges", with(bpeBase(), nil, "tokenizer.ggml.merges"), []string{"tokenizer.ggml.merges", "missing"}},
		{"merges not strings", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []int32{1}}), []string{"tokenizer.ggml.merges", "strings"}},
		{"unknown pre", with(bpeBase(), map[string]any{"tokenizer.ggml.pre": "nonsense"}), []string{"tokenizer.ggml.pre", `"nonsense"`, "llama-bpe", "qwen2", "deepseek-coder", "smollm"}},
		{"pre not a string", with(bpeBase(), map[string]any{"tokenizer.ggml.pre": true}), []string{"tokenizer.ggml.pre"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk, err := build(t, c.kv)
			if err == nil {
				t.Fatalf("no error (vocab of %d)", tk.VocabSize())
			}
			if !errors.Is(err, ErrVocab) {
				t.Errorf("%v does not wrap ErrVocab", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestTinySPM(t *testing.T) {
	tk, err := build(t, spmBase())
	if err != nil {
		t.Fatal(err)
	}
	// "▁a" (-0.5) outscores "ab" (-0.7), so "ab" never forms; "c" has no
	// token and no byte fallback, so it becomes <unk>.
	cases := []struct {
		text string
		want []int32
	}{
		{"ab a", []int32{6, 5, 6}},
		{"c", []int32{3, 0}},
		{"", nil},
	}
	for _, c := range cases {
		if got := tk.Encode(c.text, false, false); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if tk.BOS() != 1 || tk.EOS() != 2 || !tk.IsEOG(2) {
		t.Errorf("defaults: bos %d eos %d", tk.BOS(), tk.EOS())
	}
	if got := tk.Encode("a", true, false); !slices.Equal(got, []int32{1, 6}) {
		t.Errorf("default add_bos: %v", got)
	}
}

func TestTinyBPE(t *testing.T) {
	cases := []struct {
		name string
		kv   map[string]any
		text string
		want []int32
	}{
		// Lowest rank first: "b c" (0) beats "a b" (1), then "a bc" (2).
		{"rank order", bpeBase(), "abc", []int32{5}},
		{"other order", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []string{"a b", "b c"}}), "abc", []int32{3, 2}},
		{"no merges", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []string{}}), "abc", []int32{0, 1, 2}},
		// llama-bpe sets ignore_merges: a word that is a token is taken whole.
		{"ignore merges", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []string{}, "tokenizer.ggml.pre": "llama-bpe", "tokenizer.ggml.add_bos_token": false}), "abc", []int32{5}},
		// so does tekken (Mistral Nemo, Ministral 3); deepseek-v3 does not
		{"tekken ignores merges", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []string{}, "tokenizer.ggml.pre": "tekken", "tokenizer.ggml.add_bos_token": false}), "abc", []int32{5}},
		{"deepseek-v3 merges", with(bpeBase(), map[string]any{"tokenizer.ggml.merges": []string{}, "tokenizer.ggml.pre": "deepseek-v3"}), "abc", []int32{0, 1, 2}},
		// A symbol with no token is dropped, as llama.cpp does.
		{"unknown dropped", with(bpeBase(), map[string]any{"tokenizer.ggml.tokens": []string{"a", "b", "ab"}, "tokenizer.ggml.merges": []string{"a b"}}), "abcd", []int32{2}},
	}
	for _, c := range cases {
		tk, err := build(t, c.kv)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tk.Encode(c.text, false, false); !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", c.name, c.text, got, c.want)
		}
	}

	// A vocabulary smaller than llama.cpp's default BPE BOS/EOS id (11) has
	// neither, rather than ids pointing past its end.
	tk, err := build(t, bpeBase())
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS() != -1 || tk.EOS() != -1 || tk.EOT() != -1 || tk.IsEOG(0) {
		t.Errorf("tiny BPE: bos %d eos %d eot %d", tk.BOS(), tk.EOS(), tk.EOT())
	}
	if got := tk.Encode("abc", true, true); !slices.Equal(got, []int32{5}) {
		t.Errorf("addSpecial without BOS: %v", got)
	}
	// llama-bpe and tekken add BOS by default, so they need one.
	for _, pre := range []string{"llama-bpe", "tekken"} {
		if _, err := build(t, with(bpeBase(), map[string]any{"tokenizer.ggml.pre": pre})); err == nil || !strings.Contains(err.Error(), "add_bos_token") {
			t.Errorf("%s without BOS: %v", pre, err)
		}
	}
	// An absent pre-tokenizer means llama.cpp's "default".
	if tk, err := build(t, with(bpeBase(), nil, "tokenizer.ggml.pre")); err != nil || tk.pre.name != "default" {
		t.Errorf("missing pre: %v", err)
	}
}

// TestControlPromotion: llama.cpp marks end-of-generation texts as control
// even when the file says normal, which keeps them out of user text.
func TestControlPromotion(t *testing.T) {
	tk, err := build(t, map[string]any{
		"tokenizer.ggml.model":        "gpt2",
		"tokenizer.ggml.pre":          "qwen2",
		"tokenizer.ggml.tokens":       []string{"a", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|fim_pad|>"},
		"tokenizer.ggml.token_type":   []int32{1, 3, 1, 1, 1},
		"tokenizer.ggml.merges":       []string{},
		"tokenizer.ggml.eos_token_id": uint32(3),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tk.EOT() != 2 {
		t.Errorf("EOT = %d, want <|im_end|>", tk.EOT())
	}
	for id := int32(1); id <= 4; id++ {
		if !tk.IsControl(id) {
			t.Errorf("%q not control", tk.TokenText(id))
		}
	}
	for _, id := range []int32{2, 3, 4} {
		if !tk.IsEOG(id) {
			t.Errorf("%q not EOG", tk.TokenText(id))
		}
	}
	if tk.IsEOG(1) {
		t.Error("<|im_start|> is EOG")
	}
	if got := tk.Encode("<|im_end|>a", false, false); slices.Contains(got, 2) {
		t.Errorf("plain text produced <|im_end|>: %v", got)
	}
	if got := tk.Encode("<|im_start|>a<|im_end|>", false, true); !slices.Equal(got, []int32{1, 0, 2}) {
		t.Errorf("markup: %v", got)
	}
}

// TestFamilyPreTokenizers: the tokenizer names the issue-41 families'
// published GGUFs carry are either run or refused by name — Ministral 3
// (tekken), GLM-4.7-Flash (glm4), DeepSeek V2-Lite and V3 (deepseek-llm,
// deepseek-v3), Granite 4.0 (granite-docling), Qwen3.5/3.6 (qwen35) run;
// Gemma 4's own vocabulary type (tokenizer.ggml.model gemma4: BPE over raw
// UTF-8 with escaped spaces) is refused, never read as another.
func TestFamilyPreTokenizers(t *testing.T) {
	for _, pre := range []string{"tekken", "glm4", "deepseek-llm", "deepseek-v3", "granite-docling", "qwen35"} {
		tk, err := build(t, with(bpeBase(), map[string]any{"tokenizer.ggml.pre": pre, "tokenizer.ggml.bos_token_id": uint32(0)}))
		if err != nil {
			t.Errorf("%s: %v", pre, err)
			continue
		}
		if tk.pre.name != pre {
			t.Errorf("%s: runs as %q", pre, tk.pre.name)
		}
	}
	for _, c := range []struct {
		model, pre string
		want       []string
	}{
		{"gemma4", "gemma4", []string{"tokenizer.ggml.model", `"gemma4"`}},
		{"gpt2", "gemma4", []string{"tokenizer.ggml.pre", `"gemma4"`}},
		{"gpt2", "llama4", []string{"tokenizer.ggml.pre", `"llama4"`}},
	} {
		_, err := build(t, with(bpeBase(), map[string]any{"tokenizer.ggml.model": c.model, "tokenizer.ggml.pre": c.pre}))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("model %s, pre %s: %v; want an error naming %s", c.model, c.pre, err, w)
			}
		}
	}
}
