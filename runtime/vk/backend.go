package vk

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"

	"vkchat/runtime/vk/vulkan"
)

// prefillChunk is the most tokens one prefill submission processes; it
// sizes the activation buffers.
const prefillChunk = 64

// Backend runs a model's forward pass on a Vulkan device: weights uploaded
// once, the KV cache on the device, and each step one submission of a
// command buffer recorded at load (the per-step position, token ids and
// rope angles are written to a small host-visible buffer, which the GPU
// layout copies to device-local memory at the start of the step).
//
// It is made of parts, each with its own type: the weights (weights.go),
// the step's activations (activations.go), what the device keeps between
// steps (cache.go, state.go), the recorded forward pass and its step
// buffer (graph.go, exec.go) and profiling (profile.go). The plan and the
// options are the Backend's, read by all of them.
type Backend struct {
	mu   sync.Mutex
	d    *gpu
	opts backend.Options

	plan  *plan.Plan  // the model resolved, which this backend executes
	prog  *program    // the plan compiled into steps (exec.go)
	plans []layerPlan // per layer, what the recording takes from plan (plan.go)

	weights weights
	act     activations
	cache   cache
	graph   graph
	prof    profiler
	lens    lensRec  // the logit lens's taps and command buffers (lens.go), recorded on first use
	kvq     *kvQuant // a block-quantized KV cache's staging and kernels (kvquant.go), else nil
	mtp     mtpState // the MTP head and the hidden rows it reads (mtp.go)

	// logitsPool holds the logits slice the caller handed back (Recycle)
	// for the next step to fill
	logitsPool backend.LogitsPool
	closed     bool
	// sharedDevice: the device outlives the backend (tests share one so
	// pipelines compile once); Close then releases only the buffers.
	sharedDevice bool
	buffers      []*vulkan.Buffer
}

// New uploads the weights of p, a model's plan, to the best Vulkan device
// (or opts.Device) and records the decode command buffer. A plan with an
// op this backend has no kernel for is refused with backend.ErrUnsupported.
func New(p *plan.Plan, opts backend.Options) (backend.Backend, error) {
	b, err := newBackend(p, opts, false)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// NewProfiled is New with a timestamp after every dispatch, for Profile.
func NewProfiled(p *plan.Plan, opts backend.Options) (*Backend, error) {
	return newBackend(p, opts, true)
}

func newBackend(p *plan.Plan, opts backend.Options, profile bool) (*Backend, error) {
	if _, err := check(p, opts); err != nil {
		return nil, err // before opening a device for nothing
	}
	dev, err := openGPU(opts.Device)
	if err != nil {
		return nil, fmt.Errorf("vulkan backend: %w", err)
	}
	b, err := newBackendOn(dev, p, opts, profile, false)
	if err != nil {
		dev.Close()
		return nil, deviceError(err)
	}
	return b, nil
}

// check refuses what no device could run: the options, and the plan's ops
// and weight types (unsupported.go); it returns the plan compiled.
func check(p *plan.Plan, opts backend.Options) (*program, error) {
	if opts.ContextSize <= 0 {
		return nil, fmt.Errorf("vulkan backend: context size %d must be positive", opts.ContextSize)
	}
	if p.Context != opts.ContextSize {
		return nil, fmt.Errorf("vulkan backend: a plan resolved for %d positions, a context of %d", p.Context, opts.ContextSize)
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	if err := checkKVTypes(p, opts.KVType, opts.ValueType()); err != nil {
		return nil, err
	}
	if p.HeadDim%8 != 0 {
		return nil, fmt.Errorf("vulkan backend: head size %d is not a multiple of 8, which the attention kernel needs", p.HeadDim)
	}
	return refuse(p)
}

// newBackendOn builds a backend on an open device; with shared the device
// is the caller's to close. A matrix already on the device in share (an MTP
// head's shared embedding and output, by their data) is read from there.
func newBackendOn(dev *gpu, p *plan.Plan, opts backend.Options, profile, shared bool, share ...map[*byte]*Matrix) (b *Backend, err error) {
	prog, err := check(p, opts)
	if err != nil {
		return nil, err
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	wd := p.Widest
	b = &Backend{d: dev, plan: p, prog: prog, opts: opts, prof: profiler{on: profile}, sharedDevice: true}
	if len(share) > 0 {
		b.weights.mats = maps.Clone(share[0])
	}
	dev.track(&b.buffers)
	defer func() {
		dev.track(nil)
		if err != nil {
			b.Close() // the buffers only: the device is the caller's here
			b = nil
			return
		}
		b.sharedDevice = shared
	}()
	b.act.xStride = int(alignUp(uint64(p.Embd), 256))
	// the widest layer's (layers may differ: gemma4)
	b.act.qkvStride = int(alignUp(uint64(wd.Q+2*wd.KV), 4))
	b.act.qStride = int(alignUp(uint64(wd.Q), 256))
	b.act.ffStride = int(alignUp(uint64(wd.FF), 256))
	if err := b.planLayers(); err != nil {
		return nil, fmt.Errorf("vulkan backend: %s: %w", p.Arch, err)
	}
	b.weights.exactQuant = b.d.tune.cpuRounding
	if err := b.weights.upload(b.d, p, b.act.xStride); err != nil {
		return nil, fmt.Errorf("vulkan backend: loading the %s weights: %w", p.Arch, err)
	}
	if err := b.allocate(); err != nil {
		return nil, fmt.Errorf("vulkan backend: %w", err)
	}
	if err := b.record(); err != nil {
		return nil, fmt.Errorf("vulkan backend: recording the forward pass: %w", err)
	}
	return b, nil
}

// allocate creates the KV cache, the activation buffers and the step
// buffer.
func (b *Backend) allocate() error {
	p, d := b.plan, b.d
	if err := b.cache.allocate(d, b.plans, b.opts); err != nil {
		return err
	}
	act := func(name string, floats int, kind vulkan.MemKind) (*vulkan.Buffer, error) {
		return b.act.buffer(d, name, floats, kind)
	}
	if err := b.act.allocate(d, p.Heads, b.maxAttnSplits(), p.Widest.HeadDim, branchOut(p, b.weights.cpuOrder)); err != nil {
		return err
	}
	var err error
	if b.kvq, err = newKVQuant(d, p, b.weights.cpuOrder, b.opts, &b.act, prefillChunk, p.Widest.KV); err != nil {
		return err
	}
	if err := b.allocateMoE(act); err != nil {
		return err
	}
	if err := b.allocateDeltaNet(act); err != nil {
		return err
	}
	if err := b.allocateConv(act); err != nil {
		return err
	}
	if err := b.allocateMamba2(act); err != nil {
		return err
	}
	if err := b.allocateMLA(act); err != nil {
		return err
	}
	if err := b.allocatePLE(act); err != nil {
		return err
	}
	if err := b.allocateMTP(act); err != nil {
		return err
	}
	if err := b.cache.allocateState(d, p); err != nil {
		return err
	}
	if err := b.act.allocateOutputs(d, p.Vocab); err != nil {
		return err
	}
	if err := b.graph.allocateStep(d, act, b.weights.ple.rawBytes()); err != nil {
		return err
	}
	return d.Zero(b.act.zeroed()...)
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "vulkan" }

// Memory implements backend.Backend.
func (b *Backend) Memory() backend.Memory {
	kv := b.cache.kvBytes(b.plans)
	mem := backend.Memory{
		Weights:     int64(b.weights.bytes),
		KVAllocated: int64(kv),
		KVPerToken:  b.plan.CacheBytesPerToken(b.opts.KVType, b.opts.ValueType()),
		Scratch:     int64(b.act.bytes),
		Device:      fmt.Sprintf("%s (%s)", b.d.Info.Name, b.d.Info.Type),
		KVFormula:   b.plan.CacheFormula(b.opts.KVType, b.opts.ValueType(), ringExtra),
		// the recurrent layers' state on the device and its host checkpoints
		StateBytes:      b.plan.StateBytes(),
		StateFormula:    b.plan.StateFormula,
		CheckpointBytes: b.cache.checkpointBytes(),
	}
	if h := b.mtp.head; h != nil {
		// the MTP head's own weights, cache and buffers once made; the KV
		// figures describe the trunk's cache
		hm := h.Memory()
		mem.Weights += hm.Weights
		mem.Scratch += hm.KVAllocated + hm.Scratch
	}
	mem.SetCacheLayout(b.plan.CacheGroups(ringExtra), b.plan.SharedLayers(), b.opts.KVType, b.opts.ValueType())
	return mem
}

// Recycle implements backend.Recycler: logits, which Forward or
// LastLogits returned, serves the next Forward of one token.
func (b *Backend) Recycle(logits []float32) { b.logitsPool.Put(logits) }

// Close releases the device and everything on it; safe to call twice.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.mtp.head != nil {
		if err := b.mtp.head.Close(); err != nil {
			return err
		}
	}
	if b.sharedDevice {
		if err := b.d.Idle(); err != nil {
			return deviceError(err)
		}
		for _, buf := range b.buffers {
			buf.Release()
		}
		return nil
	}
	return deviceError(b.d.Close())
}

// Device describes the device the backend runs on.
func (b *Backend) Device() vulkan.DeviceInfo { return b.d.Info }

// DecodeBytes is how many bytes one decode step reads at context position
// pos: every weight the step's dispatches stream, plus the keys and values
// of the pos+1 positions attention reads. Divided into the device's read
// bandwidth it is the step's speed bound.
func (b *Backend) DecodeBytes(pos int) uint64 {
	var kv uint64 // keys and values: positions read × their rows' bytes, over the layers
	for _, pl := range b.plans {
		if pl.recurrent {
			continue
		}
		n := uint64(pos + 1)
		if pl.window > 0 {
			n = uint64(min(pos+1, pl.window))
		}
		kv += n * uint64(pl.kvHeads) * uint64(b.opts.KVType.RowBytes(pl.headDim)+b.opts.ValueType().RowBytes(pl.headDim))
	}
	return b.graph.decode.StreamBytes + kv
}

// runChunk runs the command buffers of one step of at most prefillChunk
// tokens at positions pos...
func (b *Backend) runChunk(tokens []int32, pos int, runs []*vulkan.Recorder) error {
	n := len(tokens)
	m := b.graph.stepMapped()
	putU32(m, 0, uint32(n))
	putU32(m, 4, uint32(pos))
	for i, t := range tokens {
		putU32(m, 16+4*i, uint32(t))
	}
	b.graph.ropeAngles(pos, n)
	if err := b.pleRows(tokens); err != nil {
		return fmt.Errorf("vulkan backend: %w", err)
	}
	b.cache.wrote(b.plans, pos, n) // before the run: a failed step may have written them
	b.graph.seq++
	if err := b.d.Submit(runs...); err != nil {
		return fmt.Errorf("vulkan backend: step at position %d (%d tokens): %w", pos, n, err)
	}
	return nil
}

// replay recomputes the cache for positions 0..pos-1 from the tokens kept
// in history, without logits.
func (b *Backend) replay(ctx context.Context, pos int) error {
	for start := 0; start < pos; start += prefillChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+prefillChunk, pos)
		runs, err := b.recorders(end-start, false, false)
		if err != nil {
			return fmt.Errorf("vulkan backend: recording the prefill pass: %w", err)
		}
		if err := b.runChunk(b.cache.history[start:end], start, runs); err != nil {
			return err
		}
	}
	return nil
}

// Forward implements backend.Backend.
func (b *Backend) Forward(ctx context.Context, tokens []int32, pos int, all bool) ([]float32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out, err := b.forward(ctx, tokens, pos, all, nil)
	return out, deviceError(err)
}

// forward runs the step; extra command buffers (the head kernel) follow the
// last chunk's in its submission, and then no logits are copied out.
func (b *Backend) forward(ctx context.Context, tokens []int32, pos int, all bool, extra *vulkan.Recorder) ([]float32, error) {
	if err := b.begin(ctx, tokens, pos); err != nil {
		return nil, err
	}
	vocab := b.plan.Vocab
	var out []float32
	switch {
	case all:
		out = make([]float32, len(tokens)*vocab)
	case extra == nil:
		out = b.logitsPool.Get(vocab) // every element is read back below
	}
	for start := 0; start < len(tokens); start += prefillChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+prefillChunk, len(tokens))
		n := end - start
		last := end == len(tokens)
		runs, err := b.recorders(n, all, last)
		if err != nil {
			return nil, fmt.Errorf("vulkan backend: recording the prefill pass: %w", err)
		}
		if last && extra != nil {
			runs = append(runs[:len(runs):len(runs)], extra)
		}
		if b.mtp.last.On() {
			if err := b.recordHidden(); err != nil {
				return nil, err
			}
			runs = append(runs[:len(runs):len(runs)], b.mtp.rec)
		}
		if err := b.runChunk(tokens[start:end], pos+start, runs); err != nil {
			return nil, err
		}
		if b.cache.recurrent() {
			b.cache.state.pos = pos + end
		}
		if err := b.keepChunk(pos+start, n); err != nil {
			return nil, err
		}
		var lg []byte
		switch {
		case all:
			if lg, err = b.act.readLogits(n, vocab); err != nil {
				return nil, err
			}
		case last && out != nil:
			if lg, err = b.act.readLogits(1, vocab); err != nil {
				return nil, err
			}
		}
		switch {
		case all:
			for i := 0; i < n*vocab; i++ {
				out[start*vocab+i] = getF32(lg, 4*i)
			}
		case last && out != nil:
			for i := range out {
				out[i] = getF32(lg, 4*i)
			}
		}
	}
	return out, nil
}

// begin checks a step of tokens at positions pos.. and makes the cache and
// state ready for it: the recurrent state at pos, a ring rewound past what
// it holds recomputed from the history, the tokens in the history.
func (b *Backend) begin(ctx context.Context, tokens []int32, pos int) error {
	if b.closed {
		return fmt.Errorf("vulkan backend: closed")
	}
	if len(tokens) == 0 {
		return fmt.Errorf("vulkan backend: no tokens to process")
	}
	if pos < 0 || pos+len(tokens) > b.opts.ContextSize {
		return fmt.Errorf("vulkan backend: positions %d..%d exceed the context of %d: %w",
			pos, pos+len(tokens)-1, b.opts.ContextSize, backend.ErrContextFull)
	}
	vocab := b.plan.Vocab
	for _, t := range tokens {
		if t < 0 || int(t) >= vocab {
			return fmt.Errorf("vulkan backend: token id %d outside the vocabulary of %d", t, vocab)
		}
	}
	if err := b.cache.stateAt(b.d, pos); err != nil {
		return err
	}
	if !b.cache.ringsKeep(b.plans, b.opts.ContextSize, pos) {
		// A rewind past what a ring holds: recompute the positions before
		// pos from the start, as llama.cpp re-processes the prompt when its
		// SWA cache lacks them (and as the reference backend does).
		if err := b.replay(ctx, pos); err != nil {
			return err
		}
	}
	copy(b.cache.history[pos:], tokens)
	return nil
}
