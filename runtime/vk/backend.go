package vk

import (
	"context"
	"fmt"
	"math"
	"sync"

	"vkchat/runtime/arch"
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
type Backend struct {
	mu   sync.Mutex
	d    *gpu
	m    *arch.Model
	cfg  arch.Config
	opts backend.Options
	// logitsPool holds the logits slice the caller handed back (Recycle)
	// for the next step to fill
	logitsPool backend.LogitsPool

	weights weights // weights.go

	rec        recipe
	plans      []layerPlan // per layer
	ropeTables []ropeTable // one per distinct RoPE base and scale
	plan       *plan.Plan  // the model resolved (recipe.go planLayers)

	cache cache // cache.go, state.go

	// activations, prefillChunk tokens each
	x, qkv, q, att, h *vulkan.Buffer
	o                 *vulkan.Buffer // a branch's output before its post-norm or scale (recipe.postBranch), else nil
	h2                *vulkan.Buffer // up-projection partial sums when its K is split
	xq                *vulkan.Buffer // x rounded to a vec_dot_type for the prefill product (matmul.go)
	attPart           *vulkan.Buffer // split-K decode attention's partials [head][split][dim+2], else nil
	attArrive         *vulkan.Buffer // split-K: finished splits per KV head (zero between steps), else nil
	ropeArrive        *vulkan.Buffer // tuning.ropeInQKV: finished workgroups of the Q|K|V product (zero between dispatches), else nil
	// a mixture-of-experts model's routing and expert activations (moe.go), else nil
	moeLogits, moeIDs, moeWts, moeH, moeH2, moeY *vulkan.Buffer
	// the prefill's pairs grouped by expert (moe_group.comp) and the
	// experts' h rounded per pair for the grouped down product
	moeGroups, moeXQ *vulkan.Buffer
	// moeLog holds the last token's routing per layer, which LastRouting
	// reads into lastRoute
	moeLog       *vulkan.Buffer
	lastRoute    []backend.Routing
	routeWords   []byte         // the log as read, reused
	moeFFStride  int            // floats per pair in moeH
	logits       *vulkan.Buffer // [prefillChunk][vocab]; device-local under the GPU layout (head.go reads it)
	headOut      *vulkan.Buffer // host-visible, the head kernel's result (head.go)
	headParts    *vulkan.Buffer // the head's per-workgroup records before the merge
	step         *vulkan.Buffer // per-step parameters; device-local under the GPU layout
	stepHost     *vulkan.Buffer // host-visible source of step's copy when step is device-local, else nil
	scratchBytes uint64

	xStride, qkvStride, qStride, ffStride int
	ropeOff                               int // byte offset of the rope table in step

	decode, prefill, headLast, headAll *vulkan.Recorder
	nextHead                           *vulkan.Recorder // the head kernel over the last token's logits
	seq                                uint64           // forward passes run, for LastLogits
	profile                            bool
	lastRun                            []*vulkan.Recorder
	closed                             bool

	// a hybrid model's short-convolution activations (shortconv.go), else
	// nil; their state is with the DeltaNet layers' (cache.convState)
	convBCU, convY *vulkan.Buffer

	// sharedDevice: the device outlives the backend (tests share one so
	// pipelines compile once); Close then releases only the buffers.
	sharedDevice bool
	buffers      []*vulkan.Buffer

	// dn is a hybrid model's DeltaNet activations and recurrent state,
	// the gated attention's gate and the shared expert (deltanet.go); nil
	// for other models.
	dn *dnBuffers
}

// New uploads m to the best Vulkan device (or opts.Device) and records the
// decode and prefill command buffers.
func New(m *arch.Model, opts backend.Options) (backend.Backend, error) {
	b, err := newBackend(m, opts, false)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// NewProfiled is New with a timestamp after every dispatch, for Profile.
func NewProfiled(m *arch.Model, opts backend.Options) (*Backend, error) {
	return newBackend(m, opts, true)
}

func newBackend(m *arch.Model, opts backend.Options, profile bool) (*Backend, error) {
	if opts.ContextSize <= 0 {
		return nil, fmt.Errorf("vulkan backend: context size %d must be positive", opts.ContextSize)
	}
	if err := refuseUnsupported(m); err != nil {
		return nil, err // before opening a device for nothing
	}
	dev, err := openGPU(opts.Device)
	if err != nil {
		return nil, fmt.Errorf("vulkan backend: %w", err)
	}
	b, err := newBackendOn(dev, m, opts, profile, false)
	if err != nil {
		dev.Close()
		return nil, deviceError(err)
	}
	return b, nil
}

// newBackendOn builds a backend on an open device; with shared the device
// is the caller's to close.
func newBackendOn(dev *gpu, m *arch.Model, opts backend.Options, profile, shared bool) (b *Backend, err error) {
	if opts.ContextSize <= 0 {
		return nil, fmt.Errorf("vulkan backend: context size %d must be positive", opts.ContextSize)
	}
	if err := refuseUnsupported(m); err != nil {
		return nil, err
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	if opts.KVType != backend.KVF16 && opts.KVType != backend.KVF32 {
		return nil, fmt.Errorf("vulkan backend: unknown KV cache type %q (f16 or f32)", opts.KVType)
	}
	c := m.Config
	wd := m.Widest()
	if c.HeadDim%8 != 0 {
		return nil, fmt.Errorf("vulkan backend: head size %d is not a multiple of 8, which the attention kernel needs", c.HeadDim)
	}
	vnorm := 1
	if c.Block.VNorm {
		vnorm = 2
	}
	if c.Block.QKNorm == arch.QKNormHead && c.Heads+vnorm*wd.KVHeads > 512 {
		return nil, fmt.Errorf("vulkan backend: %d query and %d key heads, over the 512 the Q/K norm kernel holds", c.Heads, vnorm*wd.KVHeads)
	}
	if c.Block.VNorm && c.Block.QKNorm != arch.QKNormHead {
		return nil, fmt.Errorf("vulkan backend: V norm without per-head Q/K norms, which the rope kernel does not compute")
	}
	b = &Backend{d: dev, m: m, cfg: c, opts: opts, profile: profile, sharedDevice: true, rec: newRecipe(&c)}
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
	b.xStride = int(alignUp(uint64(c.Embd), 256))
	// the widest layer's (layers may differ: gemma4)
	b.qkvStride = int(alignUp(uint64(wd.Q+2*wd.KV), 4))
	b.qStride = int(alignUp(uint64(wd.Q), 256))
	b.ffStride = int(alignUp(uint64(wd.FF), 256))
	if err := b.planLayers(); err != nil {
		return nil, fmt.Errorf("vulkan backend: %s: %w", m.Name, err)
	}
	if err := b.weights.upload(b.d, b.m, b.xStride, b.plans); err != nil {
		return nil, fmt.Errorf("vulkan backend: loading %s: %w", m.Name, err)
	}
	if err := b.allocate(); err != nil {
		return nil, fmt.Errorf("vulkan backend: %w", err)
	}
	if err := b.record(); err != nil {
		return nil, fmt.Errorf("vulkan backend: recording the forward pass: %w", err)
	}
	return b, nil
}

// allocate creates the KV cache and the activation buffers.
func (b *Backend) allocate() error {
	c, d := &b.cfg, b.d
	if err := b.cache.allocate(d, b.plans, b.opts); err != nil {
		return err
	}
	act := func(name string, floats int, kind vulkan.MemKind) (*vulkan.Buffer, error) {
		buf, err := d.NewBuffer(name, uint64(4*floats), kind)
		if err != nil {
			return nil, err
		}
		b.scratchBytes += buf.Size
		return buf, nil
	}
	var err error
	n := prefillChunk
	if b.x, err = act("activations x", n*b.xStride, vulkan.MemDevice); err != nil {
		return err
	}
	if b.qkv, err = act("activations qkv", n*b.qkvStride, vulkan.MemDevice); err != nil {
		return err
	}
	if b.q, err = act("activations q", n*b.qStride, vulkan.MemDevice); err != nil {
		return err
	}
	if b.att, err = act("activations attention", n*b.qStride, vulkan.MemDevice); err != nil {
		return err
	}
	if splits := b.maxAttnSplits(); splits > 0 {
		if b.attPart, err = act("split-K attention partials", c.Heads*splits*(b.m.Widest().HeadDim+2), vulkan.MemDevice); err != nil {
			return err
		}
		// a counter per KV head (at most one per query head) of a decode step's token
		if b.attArrive, err = act("split-K attention arrivals", c.Heads, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if d.tune.ropeInQKV {
		// the Q|K|V product's finished workgroups, when it rotates (rope.go)
		if b.ropeArrive, err = act("rotation-epilogue arrivals", 1, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if b.h, err = act("activations ffn", n*b.ffStride, vulkan.MemDevice); err != nil {
		return err
	}
	if b.h2, err = act("activations ffn partial sums", n*b.ffStride, vulkan.MemDevice); err != nil {
		return err
	}
	if b.xq, err = act("activations rounded for the prefill product", n*xqBound(max(b.xStride, b.qStride, b.ffStride)), vulkan.MemDevice); err != nil {
		return err
	}
	if b.rec.postBranch {
		if b.o, err = act("activations branch output", n*b.xStride, vulkan.MemDevice); err != nil {
			return err
		}
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
	if err := b.allocatePLE(act); err != nil {
		return err
	}
	if b.logits, err = act("logits", n*c.Vocab, d.tune.logitsKind()); err != nil {
		return err
	}
	if b.headOut, err = act("next-token head", headWords, vulkan.MemHost); err != nil {
		return err
	}
	if b.headParts, err = act("next-token head, per workgroup", maxHeadGroups*headWords, vulkan.MemDevice); err != nil {
		return err
	}
	b.ropeOff = int(alignUp(uint64(16+4*n), regionAlign))
	stepBytes := b.ropeOff + len(b.ropeTables)*b.ropeTableBytes()
	if b.weights.ple != nil {
		b.weights.ple.rawOff = stepBytes // aligned: the tables' size is
		stepBytes += b.pleRawBytes()
	}
	stepWords := stepBytes/4 + 4
	if b.step, err = act("step parameters", stepWords, d.tune.stepKind()); err != nil {
		return err
	}
	if b.step.Kind != vulkan.MemHost {
		if b.stepHost, err = act("step parameters (host copy)", stepWords, vulkan.MemHost); err != nil {
			return err
		}
	}
	// Padding columns of the activations must read as zero.
	var zero []*vulkan.Buffer
	// The arrival counters start at zero (the last arrival resets them).
	zeroed := []*vulkan.Buffer{b.x, b.qkv, b.q, b.att, b.h, b.h2, b.o, b.moeH, b.moeH2, b.attArrive, b.ropeArrive}
	if b.dn != nil {
		zeroed = append(zeroed, b.dn.o, b.dn.shH, b.dn.shH2)
	}
	if b.weights.ple != nil {
		zeroed = append(zeroed, b.weights.ple.in, b.weights.ple.gate)
	}
	for _, buf := range zeroed {
		if buf != nil {
			zero = append(zero, buf)
		}
	}
	return d.Zero(zero...)
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "vulkan" }

// Memory implements backend.Backend.
func (b *Backend) Memory() backend.Memory {
	kv := b.cache.kvBytes(b.plans)
	elem := b.opts.KVType.Bytes()
	mem := backend.Memory{
		Weights:     int64(b.weights.bytes),
		KVAllocated: int64(kv),
		KVPerToken:  b.plan.CacheBytesPerToken(elem),
		Scratch:     int64(b.scratchBytes),
		Device:      fmt.Sprintf("%s (%s)", b.d.Info.Name, b.d.Info.Type),
		KVFormula:   b.plan.CacheFormula(elem, ringExtra),
		// the recurrent layers' state on the device and its host checkpoints
		StateBytes:      b.m.StateBytes(),
		StateFormula:    b.m.StateFormula(),
		CheckpointBytes: b.cache.checkpointBytes(),
	}
	mem.SetCacheLayout(b.plan.CacheGroups(ringExtra), b.plan.SharedLayers(), elem)
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
	var values uint64 // per K (or V): positions read × their width, over the layers
	for _, pl := range b.plans {
		if pl.recurrent {
			continue
		}
		n := uint64(pos + 1)
		if pl.window > 0 {
			n = uint64(min(pos+1, pl.window))
		}
		values += n * uint64(pl.kvHeads*pl.headDim)
	}
	kv := 2 * values * uint64(b.opts.KVType.Bytes())
	return b.decode.StreamBytes + kv
}

// ropeAngles fills the step buffer's tables (one per distinct base and
// scale) for tokens at positions pos..pos+n-1 the way the reference backend
// computes them: theta starts at the position and is multiplied by
// base^(-2/dims) per pair in float32, then divided by the frequency factor
// and scaled, and cos/sin are taken in float64. With YaRN (gpt-oss) the
// scaled and unscaled angles are blended by the pair's ramp and cos/sin
// raised by its MScale, as the CPU backend's ropeTable.angles does.
func (b *Backend) ropeAngles(pos, n int) {
	r := b.cfg.Rope
	modelFactors := r.Factors(b.opts.ContextSize)
	mscale := one(r.AttnFactor)
	if r.YaRN != nil {
		mscale *= r.YaRN.MScale
	}
	m := b.stepMapped()
	for ti, tab := range b.ropeTables {
		pairs := tab.dims / 2
		factors := modelFactors
		if !tab.factors {
			factors = nil
		}
		// powf(base, -2.0f/n_dims) as ggml computes it, the exponent in float32
		step := float32(math.Pow(float64(tab.base), float64(float32(-2)/float32(tab.dims))))
		off := b.ropeOff + ti*b.ropeTableBytes()
		for t := 0; t < n; t++ {
			theta := float32(pos + t)
			for i := 0; i < pairs; i++ {
				th := theta
				if factors != nil {
					th /= factors[i]
				}
				if y := r.YaRN; y != nil {
					ramp := y.Ramp(i)
					th = float32(th*tab.scale)*(1-ramp) + th*ramp
				} else {
					th *= tab.scale
				}
				c, s := float32(math.Cos(float64(th))), float32(math.Sin(float64(th)))
				if mscale != 1 {
					c, s = c*mscale, s*mscale
				}
				o := off + 8*(t*pairs+i)
				putF32(m, o, c)
				putF32(m, o+4, s)
				theta *= step
			}
		}
	}
}

// runChunk runs the command buffers of one step of at most prefillChunk
// tokens at positions pos...
func (b *Backend) runChunk(tokens []int32, pos int, runs []*vulkan.Recorder) error {
	n := len(tokens)
	m := b.stepMapped()
	putU32(m, 0, uint32(n))
	putU32(m, 4, uint32(pos))
	for i, t := range tokens {
		putU32(m, 16+4*i, uint32(t))
	}
	b.ropeAngles(pos, n)
	if err := b.pleRows(tokens); err != nil {
		return fmt.Errorf("vulkan backend: %w", err)
	}
	b.cache.wrote(b.plans, pos, n) // before the run: a failed step may have written them
	b.seq++
	if err := b.d.Submit(runs...); err != nil {
		return fmt.Errorf("vulkan backend: step at position %d (%d tokens): %w", pos, n, err)
	}
	b.lastRun = runs
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
	if b.closed {
		return nil, fmt.Errorf("vulkan backend: closed")
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("vulkan backend: no tokens to process")
	}
	if pos < 0 || pos+len(tokens) > b.opts.ContextSize {
		return nil, fmt.Errorf("vulkan backend: positions %d..%d exceed the context of %d: %w",
			pos, pos+len(tokens)-1, b.opts.ContextSize, backend.ErrContextFull)
	}
	vocab := b.cfg.Vocab
	for _, t := range tokens {
		if t < 0 || int(t) >= vocab {
			return nil, fmt.Errorf("vulkan backend: token id %d outside the vocabulary of %d", t, vocab)
		}
	}
	if err := b.cache.stateAt(b.d, pos); err != nil {
		return nil, err
	}
	if !b.cache.ringsKeep(b.plans, b.opts.ContextSize, pos) {
		// A rewind past what a ring holds: recompute the positions before
		// pos from the start, as llama.cpp re-processes the prompt when its
		// SWA cache lacks them (and as the reference backend does).
		if err := b.replay(ctx, pos); err != nil {
			return nil, err
		}
	}
	copy(b.cache.history[pos:], tokens)
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
		if err := b.runChunk(tokens[start:end], pos+start, runs); err != nil {
			return nil, err
		}
		if b.cache.recurrent() {
			b.cache.state.pos = pos + end
		}
		var lg []byte
		switch {
		case all:
			if lg, err = b.readLogits(n); err != nil {
				return nil, err
			}
		case last && out != nil:
			if lg, err = b.readLogits(1); err != nil {
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
