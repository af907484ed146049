// Package scriptmodel writes GGUF models whose greedy output follows a
// script, on a real vocabulary with its real chat template, so the whole
// path from template to tokens to the forward pass to the screen can be
// tested with replies that a random model would never produce (a <think>
// block, an end-of-turn token).
//
// The model is a bigram table written as transformer weights: every layer's
// output projections are zero, so the residual stream at a position is the
// embedding of its own token; script tokens have one-hot embeddings, and
// the output row of each scripted successor points at its predecessor's
// direction. Greedy decoding then walks the script from the prompt's last
// token. Tokens outside the script embed to zero (uniform logits).
package scriptmodel

import (
	"fmt"
	"math"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// Spec describes a scripted model.
type Spec struct {
	// Arch is the architecture written: "llama" (default) or "qwen3".
	Arch string
	// Vocab supplies tokenizer.* metadata, chat template included.
	Vocab *gguf.File
	// Next maps a token to the token greedy decoding must produce after
	// it. Every token in it, on either side, needs a dimension of the
	// embedding, so Embd must be at least the number of distinct tokens.
	Next map[int32]int32
	// Template, when set, replaces the vocabulary's chat template.
	Template string
	// Embd is the embedding width (default 64); Layers default 1.
	Embd, Layers int
	Context      int // default 512
}

const (
	heads   = 2
	ffWidth = 64
	margin  = 16 // logit of the scripted successor; every other token gets 0
)

// Build returns the model's writer.
func Build(s Spec) (*gguf.Writer, error) {
	if s.Vocab == nil {
		return nil, fmt.Errorf("scriptmodel: a vocabulary file is required")
	}
	if s.Arch == "" {
		s.Arch = "llama"
	}
	if s.Arch != "llama" && s.Arch != "qwen3" {
		return nil, fmt.Errorf("scriptmodel: architecture %q: only llama and qwen3 are written", s.Arch)
	}
	if s.Embd == 0 {
		s.Embd = 64
	}
	if s.Layers == 0 {
		s.Layers = 1
	}
	if s.Context == 0 {
		s.Context = 512
	}
	tokens, ok, err := s.Vocab.Strings("tokenizer.ggml.tokens")
	if err != nil || !ok {
		return nil, fmt.Errorf("scriptmodel: %s has no tokenizer.ggml.tokens: %v", s.Vocab.Path, err)
	}
	vocab := len(tokens)
	dim := map[int32]int{}
	for a, b := range s.Next {
		for _, id := range []int32{a, b} {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("scriptmodel: token %d is outside the vocabulary of %d", id, vocab)
			}
			if _, ok := dim[id]; !ok {
				dim[id] = len(dim)
			}
		}
	}
	if len(dim) > s.Embd {
		return nil, fmt.Errorf("scriptmodel: %d script tokens need embd ≥ %d, have %d", len(dim), len(dim), s.Embd)
	}
	embd := make([]float32, vocab*s.Embd)
	for id, k := range dim {
		embd[int(id)*s.Embd+k] = 1
	}
	out := make([]float32, vocab*s.Embd)
	for a, b := range s.Next {
		out[int(b)*s.Embd+dim[a]] = margin
	}
	// rmsnorm scales a one-hot row by √embd; undo it so the successor's
	// logit is margin whatever the width.
	scale := float32(1 / math.Sqrt(float64(s.Embd)))
	for i := range out {
		out[i] *= scale
	}

	w := gguf.NewWriter()
	hd := s.Embd / heads
	set := func(k string, v any) { w.Set(s.Arch+"."+k, v) }
	w.Set("general.architecture", s.Arch)
	w.Set("general.name", "scripted-"+s.Arch)
	set("context_length", uint32(s.Context))
	set("embedding_length", uint32(s.Embd))
	set("feed_forward_length", uint32(ffWidth))
	set("block_count", uint32(s.Layers))
	set("attention.head_count", uint32(heads))
	set("attention.head_count_kv", uint32(heads))
	set("rope.dimension_count", uint32(hd))
	set("rope.freq_base", float32(10000))
	set("attention.layer_norm_rms_epsilon", float32(1e-6))
	if s.Arch == "qwen3" {
		set("attention.key_length", uint32(hd))
		set("attention.value_length", uint32(hd))
	}
	for _, kv := range s.Vocab.KVs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	if s.Template != "" {
		w.Set("tokenizer.chat_template", s.Template)
	}
	add := func(name string, data []float32, dims ...uint64) error {
		enc, err := quant.Quantize(ggml.F32, data)
		if err != nil {
			return fmt.Errorf("scriptmodel: %s: %w", name, err)
		}
		return w.AddTensor(name, ggml.F32, dims, enc)
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	e := uint64(s.Embd)
	if err := add("token_embd.weight", embd, e, uint64(vocab)); err != nil {
		return nil, err
	}
	if err := add("output_norm.weight", ones(s.Embd), e); err != nil {
		return nil, err
	}
	if err := add("output.weight", out, e, uint64(vocab)); err != nil {
		return nil, err
	}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		mats := []struct {
			name       string
			cols, rows int
		}{
			{"attn_q", s.Embd, s.Embd}, {"attn_k", s.Embd, s.Embd}, {"attn_v", s.Embd, s.Embd}, {"attn_output", s.Embd, s.Embd},
			{"ffn_gate", s.Embd, ffWidth}, {"ffn_up", s.Embd, ffWidth}, {"ffn_down", ffWidth, s.Embd},
		}
		for _, m := range mats {
			if err := add(p+m.name+".weight", make([]float32, m.cols*m.rows), uint64(m.cols), uint64(m.rows)); err != nil {
				return nil, err
			}
		}
		norms := []string{"attn_norm", "ffn_norm"}
		if s.Arch == "qwen3" {
			norms = append(norms, "attn_q_norm", "attn_k_norm")
		}
		for _, n := range norms {
			width := s.Embd
			if strings.HasSuffix(n, "q_norm") || strings.HasSuffix(n, "k_norm") {
				width = hd
			}
			if err := add(p+n+".weight", ones(width), uint64(width)); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

// Write builds the model and writes it to path.
func Write(path string, s Spec) error {
	w, err := Build(s)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// Chain turns a script (the prompt's last token, then the reply) into the
// successor map Spec.Next wants; a token may appear only once as a
// predecessor.
func Chain(seq ...int32) (map[int32]int32, error) {
	next := map[int32]int32{}
	for i := 0; i+1 < len(seq); i++ {
		if prev, ok := next[seq[i]]; ok && prev != seq[i+1] {
			return nil, fmt.Errorf("scriptmodel: token %d is followed by both %d and %d", seq[i], prev, seq[i+1])
		}
		next[seq[i]] = seq[i+1]
	}
	return next, nil
}
