// Package synth writes llama-architecture GGUF models with seeded random
// weights, for benchmarks and tests that need a model of a given shape.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// Shape is the model's dimensions.
type Shape struct {
	Embd, FF, Heads, KVHeads, Layers int
	Context                          int
}

// Shapes are named presets: llama2.c's 110M and TinyLlama's 1.1B.
var Shapes = map[string]Shape{
	"110m": {Embd: 768, FF: 2048, Heads: 12, KVHeads: 12, Layers: 12, Context: 1024},
	"1b":   {Embd: 2048, FF: 5632, Heads: 32, KVHeads: 4, Layers: 22, Context: 2048},
	"tiny": {Embd: 64, FF: 128, Heads: 4, KVHeads: 2, Layers: 2, Context: 256},
}

// Options choose the weight type, the vocabulary source and the seed.
type Options struct {
	Type  ggml.Type // type of the matrices; norms stay F32
	Vocab *gguf.File
	Seed  uint64
}

// Write generates the model and writes it to path.
func Write(path string, s Shape, o Options) error {
	w, err := Build(s, o)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// Build returns a writer holding the model.
func Build(s Shape, o Options) (*gguf.Writer, error) {
	if s.Embd <= 0 || s.Heads <= 0 || s.Embd%s.Heads != 0 || s.KVHeads <= 0 || s.Heads%s.KVHeads != 0 || s.FF <= 0 || s.Layers <= 0 {
		return nil, fmt.Errorf("synth: inconsistent shape %+v", s)
	}
	if o.Vocab == nil {
		return nil, fmt.Errorf("synth: a vocabulary file is required")
	}
	tokens, ok, err := o.Vocab.Strings("tokenizer.ggml.tokens")
	if err != nil || !ok {
		return nil, fmt.Errorf("synth: %s has no tokenizer.ggml.tokens: %v", o.Vocab.Path, err)
	}
	vocab := len(tokens)
	be := s.Embd % int(o.Type.BlockElems())
	bf := s.FF % int(o.Type.BlockElems())
	if be != 0 || bf != 0 {
		return nil, fmt.Errorf("synth: embd %d and ff %d must be multiples of the %s block size %d", s.Embd, s.FF, o.Type, o.Type.BlockElems())
	}
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.name", fmt.Sprintf("synthetic-%s", strings.ToLower(o.Type.String())))
	w.Set("llama.context_length", uint32(s.Context))
	w.Set("llama.embedding_length", uint32(s.Embd))
	w.Set("llama.feed_forward_length", uint32(s.FF))
	w.Set("llama.block_count", uint32(s.Layers))
	w.Set("llama.attention.head_count", uint32(s.Heads))
	w.Set("llama.attention.head_count_kv", uint32(s.KVHeads))
	w.Set("llama.rope.dimension_count", uint32(s.Embd/s.Heads))
	w.Set("llama.rope.freq_base", float32(10000))
	w.Set("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
	for _, kv := range o.Vocab.KVs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	hd := s.Embd / s.Heads
	add := func(name string, cols, rows int, typ ggml.Type, norm bool) error {
		data := make([]float32, cols*rows)
		if norm {
			for i := range data {
				data[i] = 1
			}
		} else {
			// Scaled so activations keep unit size through the layers.
			std := 1 / math.Sqrt(float64(cols))
			for i := range data {
				data[i] = float32(rng.NormFloat64() * std)
			}
		}
		enc, err := quant.Quantize(typ, data)
		if err != nil {
			return fmt.Errorf("synth: %s: %w", name, err)
		}
		dims := []uint64{uint64(cols), uint64(rows)}
		if norm {
			dims = dims[:1]
		}
		return w.AddTensor(name, typ, dims, enc)
	}
	type spec struct {
		name       string
		cols, rows int
		norm       bool
	}
	specs := []spec{{"token_embd.weight", s.Embd, vocab, false}, {"output_norm.weight", s.Embd, 1, true}, {"output.weight", s.Embd, vocab, false}}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		specs = append(specs,
			spec{p + "attn_norm.weight", s.Embd, 1, true},
			spec{p + "attn_q.weight", s.Embd, s.Heads * hd, false},
			spec{p + "attn_k.weight", s.Embd, s.KVHeads * hd, false},
			spec{p + "attn_v.weight", s.Embd, s.KVHeads * hd, false},
			spec{p + "attn_output.weight", s.Heads * hd, s.Embd, false},
			spec{p + "ffn_norm.weight", s.Embd, 1, true},
			spec{p + "ffn_gate.weight", s.Embd, s.FF, false},
			spec{p + "ffn_up.weight", s.Embd, s.FF, false},
			spec{p + "ffn_down.weight", s.FF, s.Embd, false},
		)
	}
	for _, sp := range specs {
		typ := o.Type
		if sp.norm {
			typ = ggml.F32
		}
		if err := add(sp.name, sp.cols, sp.rows, typ, sp.norm); err != nil {
			return nil, err
		}
	}
	return w, nil
}
