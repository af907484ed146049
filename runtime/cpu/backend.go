// Package cpu is the CPU backend and the reference the Vulkan backend is
// checked against: an executor of a model's op plan (runtime/plan; it never
// sees the architecture's declaration), written in Go over the products of
// runtime/quant
// and, where the CPU has them, the native kernels of runtime/simd
// (attention, norms, RoPE, activations, the F16 KV cache), which compute
// bit for bit what the portable Go code beside them computes. Work is
// shared over one worker per physical core (quant's pool, working as a
// team through each forward pass: SetTeam); Q4_0, Q8_0,
// Q4_K and Q5_K weights are repacked at load (pack.go).
package cpu

import (
	"context"
	"fmt"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// maxBatch bounds the tokens processed together in one prefill pass, which
// bounds the scratch buffers; longer prompts run in several passes.
const maxBatch = 64

// Backend runs a model on the CPU.
type Backend struct {
	opts backend.Options
	kv   *kvCache
	s    scratch
	// experts is the mixture-of-experts scratch (nil for dense models);
	// expertPacks packs experts as they are first used (packWeights
	// leaves them alone: a model's experts are most of its file).
	experts     *moeScratch
	expertPacks *quant.PackCache
	// hybrid is the recurrent layers' state and scratch (deltanet.go);
	// nil for attention-only models.
	hybrid *hybrid
	// gated is the gated attention's and shared expert's scratch
	// (deltanet.go); nil without them
	gated *gatedScratch
	// logitsPool holds the logits slice the caller handed back (Recycle)
	// for the next step to fill
	logitsPool backend.LogitsPool

	// plan is the model resolved (runtime/plan), prog the plan compiled
	// for this backend (exec.go), ropes its rotations' tables, one per
	// plan rotation
	plan        *plan.Plan
	prog        program
	ropes       []*ropeTable
	layers      []layerState  // per layer: what its kernels read, decoded once
	embedding   *plan.Weight  // the token embedding, when it is not also the output matrix
	pleNorm     []float32     // per_layer_proj_norm (gemma4 PLE)
	gelu        []float32     // llama.cpp's F16 GELU table, when the recipe uses it
	attnWork    []attnScratch // one per KV head
	f16Acc      bool          // mimic llama.cpp's F16 attention accumulation
	quantNative bool          // a quantized cache read in place (attendQuantNative)
	unpack      func()        // drops the repacked weights (packWeights)
	packedBytes int64         // their size

	call poolCalls // what the pool's range functions work on

	// rot is the Hadamard rotation a quantized cache takes (rotate.go)
	rot rotation

	// tap, when set (Lens), sees the stream after each layer of a batch
	tap func(layer, n int)
	// timer, when set (TimeOps), sums each op's time (optime.go)
	timer *opTimer

	// history holds the token at every position up to filled, so that a
	// rewind past what a sliding-window ring still holds can recompute it.
	history []int32
	filled  int

	// mtp runs the plan's MTP head (mtp.go), made on its first use; nil
	// until then and for models without one. last is the hidden state of
	// the rows read since LastHidden was last called (KeepHidden).
	mtp  *Backend
	last backend.KeptHidden

	// conv is the short convolutions' batch scratch (shortconv.go); nil
	// without them. Their state lives with the other recurrent layers'
	// (hybrid, state.go).
	conv *convScratch
	// mla is the latent attention's batch scratch (mla.go); nil without.
	mla *mlaScratch
	// mamba is the Mamba2 layers' batch scratch (mamba2.go); nil without
	// them. Their state lives with the other recurrent layers'.
	mamba *mamba2Scratch
}

// layerState is what the kernels of a layer read beyond the plan's op
// (attention's window and sinks, the router's bound matrix and biases, the
// short convolution's taps, the PLE norm), decoded once. Nil vectors are
// absent from the model.
type layerState struct {
	att     plan.Attention // an attention layer's op
	kvLayer int            // the layer whose cache it reads: its own, or a KV-shared layer's source
	router  quant.Matrix   // a mixture-of-experts layer's router, bound (quant.Bind)
	// a mixture-of-experts layer's router bias, and its per-expert
	// biases (one row per expert), decoded once
	routerBias, gateBias, upBias, downBias []float32
	selectBias                             []float32 // added to choose experts only (deepseek2's exp_probs_b)
	// experts beside a dense FFN (gemma4): the router input's weight,
	// each expert's output scale, the experts' post-norm; nil elsewhere
	routerScale, downScale, moePost []float32
	sinks                           []float32 // attention sinks (gpt-oss)
	convTaps                        []float32 // a short-convolution layer's kernel [embd x L]
	pleNorm                         []float32 // the layer's PLE post_norm (gemma4)
}

// poolCalls are the range functions the backend hands the worker pool,
// made once, and the arguments of the call in progress.
type poolCalls struct {
	attnHeads, swiglu func(lo, hi int)
	attnQueryHeads    func(lo, hi int) // one KV head's query heads (attention.go)
	attn              attnCall
	gate, up          []float32
}

type attnScratch struct {
	keys, vals, qh []float32
	// a quantized cache's: key blocks, one value row's blocks, the
	// scores of a query and the query's conversion
	kq, vq []byte
	scores []float32
	rd     quant.RowDotter
	// attendQuantNative's: the batch's value rows encoded (a quantized V)
	// and the query's conversion
	vbat []byte
	qa   qacts
}

// New prepares a model's plan for the CPU with a KV cache of
// p.Context positions (a sliding-window layer's cache holds only its
// window); opts.ContextSize, when set, must agree.
func New(p *plan.Plan, opts backend.Options) (*Backend, error) {
	if opts.ContextSize == 0 {
		opts.ContextSize = p.Context
	}
	if opts.ContextSize <= 0 || opts.ContextSize != p.Context {
		return nil, fmt.Errorf("cpu backend: context size %d, but the plan is resolved for %d", opts.ContextSize, p.Context)
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	typV := opts.ValueType()
	rot, err := cacheTypes(p, opts.KVType, typV)
	if err != nil {
		return nil, err
	}
	if opts.Threads <= 0 {
		opts.Threads = DefaultThreads()
	}
	quant.SetThreads(opts.Threads)
	b := &Backend{plan: p, opts: opts, f16Acc: opts.KVType == backend.KVF16, history: make([]int32, opts.ContextSize), rot: rot}
	b.unpack, b.packedBytes = packWeights(p)
	b.call.attnHeads = b.attnHeadsFn()
	b.call.attnQueryHeads = b.attnQueryHeadsFn()
	b.call.swiglu = func(lo, hi int) { swiglu(b.call.gate[lo:hi], b.call.up[lo:hi]) }
	b.kv = newKVCache(p, len(p.Layers), opts.KVType, typV)
	b.s = newScratch(p, maxBatch)
	b.experts = newMoEScratch(p, maxBatch)
	b.hybrid = newHybrid(p, maxBatch)
	b.gated = newGatedScratch(p, maxBatch)
	if b.experts != nil {
		budget := expertPackBudget(p)
		b.expertPacks = quant.NewPackCache(budget)
		if budget >= p.ExpertBytes {
			b.experts.resident = make([]residentExpert, len(p.Layers)*p.MoEShape.Experts)
		}
	}
	b.conv = newConvScratch(p, maxBatch)
	b.mla = newMLAScratch(p, maxBatch)
	b.mamba = newMamba2Scratch(p, maxBatch)
	if b.prog, err = b.compile(p); err != nil {
		b.Close()
		return nil, err
	}
	b.quantNative = quantNative(opts.KVType, typV)
	sz := attnSizesFor(p.Widest.HeadDim, opts.ContextSize, opts.KVType, typV)
	for h := 0; h < p.Widest.KVHeads; h++ {
		w := attnScratch{keys: make([]float32, sz.rows), vals: make([]float32, sz.rows), qh: make([]float32, p.Widest.HeadDim)}
		if b.kv.quantized() {
			w.kq = make([]byte, sz.kq)
			w.vq = make([]byte, sz.vq)
			w.scores = make([]float32, sz.scores)
			w.vbat = make([]byte, sz.vbat)
		}
		b.attnWork = append(b.attnWork, w)
	}
	return b, nil
}

// quantNative reports whether attention over a cache of these types runs
// attendQuantNative, which reads the cache in place: a quantized K, and
// native kernels (every quantized type has its score and value kernels).
// New decides it once, since the buffers it makes depend on it.
func quantNative(k, v backend.KVType) bool {
	return nativeAttention && simd.Level() > 0 && k.Quantized() && simd.Has(int(ggmlType(k))) && simd.HasAttnValues(int(valueType(v)), 32)
}

// attnSizes is one KV head's attention buffers, in elements of each.
type attnSizes struct {
	rows                    int // keys and vals: float32 values
	kq, vq, vbat, scores, q int
}

// attnSizesFor is what New makes per KV head for heads of hd values and a
// context of ctx positions: the widened keys and values of the whole
// context (where attention widens them), a quantized cache's key blocks
// and scores, and — where the native kernels read a quantized cache in
// place — only the batch's own rows, so that the buffers shrink with the
// cache and a quantized cache's longer context fits the memory.
func attnSizesFor(hd, ctx int, k, v backend.KVType) attnSizes {
	s := attnSizes{rows: ctx * hd, q: hd}
	if !k.Quantized() && !v.Quantized() {
		return s
	}
	s.scores = ctx
	s.kq = int(k.RowBytes(ctx * hd))
	s.vq = int(v.RowBytes(hd) + k.RowBytes(hd))
	if quantNative(k, v) {
		batch := min(ctx, maxBatch)
		s.rows = batch * hd
		s.kq = int(k.RowBytes(batch * hd))
		s.vbat = int(v.RowBytes(batch * hd))
	}
	return s
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "cpu" }

// Memory implements backend.Backend.
func (b *Backend) Memory() backend.Memory {
	mem := backend.Memory{
		Weights:     b.plan.WeightBytes + b.packedBytes + b.expertPacks.Bytes(), // the mapped file and the repacked copies
		KVAllocated: b.kv.allocated(),
		KVPerToken:  b.plan.CacheBytesPerToken(b.kv.typ, b.kv.typV),
		Scratch:     b.s.bytes() + b.experts.bytes() + b.hybrid.bytes() + b.gated.bytes() + b.mtpBytes() + b.conv.bytes() + b.mla.bytes() + b.mamba.bytes() + attnWorkBytes(b.plan.Widest, b.opts.ContextSize, b.kv.typ, b.kv.typV) + int64(4*len(b.gelu)),
		Device:      fmt.Sprintf("CPU (%d thread%s, %s)", b.opts.Threads, map[bool]string{true: "", false: "s"}[b.opts.Threads == 1], simd.Describe()),
		KVFormula:   b.plan.CacheFormula(b.kv.typ, b.kv.typV, 0),
		// the recurrent layers' state and its checkpoints (state.go)
		StateBytes:      b.plan.StateBytes(),
		StateFormula:    b.plan.StateFormula,
		CheckpointBytes: b.hybrid.checkpointBytes(),
	}
	mem.SetCacheLayout(b.plan.CacheGroups(0), b.plan.SharedLayers(), b.kv.typ, b.kv.typV)
	return mem
}

// Close implements backend.Backend; the weights belong to the mapped file,
// their repacked copies to the backend.
func (b *Backend) Close() error {
	if b.mtp != nil {
		b.mtp.Close()
		b.mtp = nil
	}
	if b.unpack != nil {
		b.unpack()
		b.unpack = nil
	}
	b.expertPacks.Free()
	return nil
}

// Forward implements backend.Backend.
func (b *Backend) Forward(ctx context.Context, tokens []int32, pos int, all bool) ([]float32, error) {
	return b.forward(ctx, tokens, pos, all, nil)
}

// checkBatch refuses a batch the cache or the vocabulary cannot take.
func (b *Backend) checkBatch(tokens []int32, pos int) error {
	if len(tokens) == 0 {
		return fmt.Errorf("cpu backend: no tokens to process")
	}
	if pos < 0 || pos+len(tokens) > b.opts.ContextSize {
		return fmt.Errorf("cpu backend: positions %d..%d exceed the context of %d: %w",
			pos, pos+len(tokens)-1, b.opts.ContextSize, backend.ErrContextFull)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= b.plan.Vocab {
			return fmt.Errorf("cpu backend: token id %d outside the vocabulary of %d", t, b.plan.Vocab)
		}
	}
	return nil
}

// forward is Forward, also copying each token's hidden state (the
// stream after the head's norm, hiddenRows) into hidden when it is not
// nil (len(tokens)×embd). A model with an MTP head keeps them of every
// Forward for LastHidden.
func (b *Backend) forward(ctx context.Context, tokens []int32, pos int, all bool, hidden []float32) ([]float32, error) {
	if err := b.checkBatch(tokens, pos); err != nil {
		return nil, err
	}
	// a decode step runs as a team, its helpers polling between the
	// step's ops (quant.BeginStep); a batch's long products go by the
	// hand-off (quant.BeginBatch says why)
	if len(tokens) == 1 {
		defer quant.BeginStep()()
	} else {
		defer quant.BeginBatch()()
	}
	keep := hidden == nil && b.last.On()
	if keep {
		hidden = b.last.Extend(pos, len(tokens), b.plan.Embd)
	}
	if b.hybrid != nil {
		if err := b.hybrid.at(pos); err != nil {
			return nil, err
		}
	}
	// A rewind past what a sliding-window ring still holds recomputes the
	// window from the start, as llama.cpp re-processes the prompt when its
	// SWA cache lacks the positions.
	if pos < b.filled && !b.kv.keeps(pos, b.filled) {
		for start := 0; start < pos; start += maxBatch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b.forwardBatch(b.history[start:min(start+maxBatch, pos)], start)
		}
	}
	copy(b.history[pos:], tokens)
	b.filled = pos + len(tokens)
	vocab := b.plan.Vocab
	var out []float32
	if all {
		out = make([]float32, len(tokens)*vocab)
	} else {
		out = b.logitsPool.Get(vocab) // logits() writes every element
	}
	for start := 0; start < len(tokens); start += maxBatch {
		if err := ctx.Err(); err != nil {
			b.filled = pos + start // what the cache holds now
			return nil, err
		}
		end := min(start+maxBatch, len(tokens))
		last := end == len(tokens)
		b.forwardBatch(tokens[start:end], pos+start)
		if hidden != nil {
			b.hiddenRows(hidden[start*b.plan.Embd:], end-start)
		}
		switch {
		case all:
			b.logits(out[start*vocab:end*vocab], 0, end-start)
		case last:
			b.logits(out, end-start-1, end-start)
		}
	}
	if keep {
		b.last.Done(len(tokens))
	}
	return out, nil
}

// Recycle implements backend.Recycler: logits, which Forward returned,
// serves the next Forward of one token.
func (b *Backend) Recycle(logits []float32) { b.logitsPool.Put(logits) }

// attnWorkBytes is the attention buffers New makes for a context of ctx
// positions with a cache of these types (attnSizesFor), over all KV heads.
func attnWorkBytes(w plan.Widths, ctx int, k, v backend.KVType) int64 {
	s := attnSizesFor(w.HeadDim, ctx, k, v)
	per := 4*int64(2*s.rows+s.q+s.scores) + int64(s.kq+s.vq+s.vbat)
	return int64(w.KVHeads) * per
}

// ContextBytes is what a context of ctx positions costs the backend beyond
// the weights and the batch scratch: the KV cache, the attention buffers,
// the token history, and a hybrid model's recurrent state with as many
// checkpoints as the backend keeps. The engine checks it against the
// memory there is before New allocates it.
func ContextBytes(p *plan.Plan, ctx int, kv, kvV backend.KVType) int64 {
	return p.CacheBytes(kv, kvV, ctx, 0) + attnWorkBytes(p.Widest, ctx, kv, kvV) + 4*int64(ctx) + (1+MaxCheckpoints)*p.StateBytes()
}
