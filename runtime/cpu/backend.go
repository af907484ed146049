// Package cpu is the reference backend: the llama-family forward pass in
// plain Go, readable in one sitting (in the spirit of llama2.c's run.c) and
// parallel over rows and heads. The Vulkan backend is checked against it.
package cpu

import (
	"context"
	"fmt"
	"runtime"

	"vkchat/models"
	"vkchat/runtime/backend"
	"vkchat/runtime/quant"
)

// maxBatch bounds the tokens processed together in one prefill pass, which
// bounds the scratch buffers; longer prompts run in several passes.
const maxBatch = 64

// Backend runs a model on the CPU.
type Backend struct {
	m    *models.Model
	opts backend.Options
	kv   *kvCache
	s    scratch
	rope ropeTable

	norms    []layerVectors // per layer, decoded to float32 once
	outNorm  []float32
	attnWork []attnScratch // one per KV head
	f16Acc   bool          // mimic llama.cpp's F16 attention accumulation
}

type layerVectors struct {
	attn, ffn  []float32
	bq, bk, bv []float32 // nil without biases
}

type attnScratch struct {
	keys, vals, qh []float32
}

// New prepares m for the CPU with a KV cache of opts.ContextSize positions.
func New(m *models.Model, opts backend.Options) (*Backend, error) {
	if opts.ContextSize <= 0 {
		return nil, fmt.Errorf("cpu backend: context size %d must be positive", opts.ContextSize)
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	if opts.KVType != backend.KVF16 && opts.KVType != backend.KVF32 {
		return nil, fmt.Errorf("cpu backend: unknown KV cache type %q (f16 or f32)", opts.KVType)
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.NumCPU()
	}
	quant.SetThreads(opts.Threads)
	b := &Backend{m: m, opts: opts, f16Acc: opts.KVType == backend.KVF16}
	b.kv = newKVCache(&m.Config, opts.ContextSize, opts.KVType)
	b.s = newScratch(&m.Config, maxBatch)
	b.rope = newRope(&m.Config)
	b.outNorm = vectorF32(m.OutputNorm)
	for i := range m.Layers {
		L := &m.Layers[i]
		v := layerVectors{attn: vectorF32(L.AttnNorm), ffn: vectorF32(L.FFNNorm)}
		if L.Bq != nil {
			v.bq, v.bk, v.bv = vectorF32(*L.Bq), vectorF32(*L.Bk), vectorF32(*L.Bv)
		}
		b.norms = append(b.norms, v)
	}
	hd := m.HeadDim
	for h := 0; h < m.KVHeads; h++ {
		b.attnWork = append(b.attnWork, attnScratch{
			keys: make([]float32, opts.ContextSize*hd), vals: make([]float32, opts.ContextSize*hd),
			qh: make([]float32, hd),
		})
	}
	return b, nil
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "cpu" }

// Memory implements backend.Backend.
func (b *Backend) Memory() backend.Memory {
	return backend.Memory{
		Weights:     b.m.WeightBytes(),
		KVAllocated: b.kv.allocated(),
		KVPerToken:  b.m.KVBytesPerToken(b.opts.KVType.Bytes()),
		Scratch:     b.s.bytes() + int64(len(b.attnWork)*(2*b.opts.ContextSize+1)*b.m.HeadDim*4),
		Device:      fmt.Sprintf("CPU (%d threads)", b.opts.Threads),
	}
}

// Close implements backend.Backend; the weights belong to the mapped file.
func (b *Backend) Close() error { return nil }

// Forward implements backend.Backend.
func (b *Backend) Forward(ctx context.Context, tokens []int32, pos int, all bool) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("cpu backend: no tokens to process")
	}
	if pos < 0 || pos+len(tokens) > b.opts.ContextSize {
		return nil, fmt.Errorf("cpu backend: positions %d..%d exceed the context of %d: %w",
			pos, pos+len(tokens)-1, b.opts.ContextSize, backend.ErrContextFull)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= b.m.Vocab {
			return nil, fmt.Errorf("cpu backend: token id %d outside the vocabulary of %d", t, b.m.Vocab)
		}
	}
	vocab := b.m.Vocab
	var out []float32
	if all {
		out = make([]float32, len(tokens)*vocab)
	} else {
		out = make([]float32, vocab)
	}
	for start := 0; start < len(tokens); start += maxBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+maxBatch, len(tokens))
		last := end == len(tokens)
		b.forwardBatch(tokens[start:end], pos+start)
		switch {
		case all:
			b.logits(out[start*vocab:end*vocab], 0, end-start)
		case last:
			b.logits(out, end-start-1, end-start)
		}
	}
	return out, nil
}
