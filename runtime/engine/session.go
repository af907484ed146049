package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/chat"
	"vkchat/runtime/gguf"
	"vkchat/runtime/sample"
	"vkchat/runtime/tokenizer"
)

// Options configure Load.
type Options struct {
	Backend     string // "auto" (default: Vulkan on a GPU, else the CPU), "cpu" or "vulkan"
	ContextSize int    // 0: the model's trained context, capped at DefaultContext
	Threads     int
	Device      int              // Vulkan device index, -1 for the best
	KVType      backend.KVType   // the KV cache's keys (and values unless KVTypeV)
	KVTypeV     backend.KVType   // its values; "" = KVType
	DeviceHead  backend.HeadMode // reduce the logits to their head on the device ("" auto)
	Params      sample.Params
	// Template forces a built-in chat template by name, or "none" for
	// completion mode; "" uses the model's own.
	Template string
	// Spec is the speculative decoding to start with (spec.go).
	Spec SpecOptions
}

// DefaultContext caps the context window when none is asked for, so a model
// trained on 128k positions does not allocate a 128k KV cache by default.
const DefaultContext = 4096

// Session is a loaded model ready to generate. Generate calls are
// serialised; the other methods may be called from any goroutine.
type Session struct {
	// closeOnce makes Close safe to call twice: the chat's /model closes
	// the session it leaves while its command still holds a deferred Close.
	closeOnce sync.Once
	closeErr  error
	file      *gguf.File
	model     *arch.Model
	tok       *tokenizer.Tokenizer
	tmpl      *chat.Template
	be        backend.Backend
	info      ModelInfo
	ctxSize   int
	beOpts    backend.Options

	genMu sync.Mutex // held for the whole of Generate
	// stateAt is the position a recurrent state is at (-1: unknown, after a
	// failed pass) and checkpointEvery the generated tokens between its
	// checkpoints (checkpoint.go); both only change with genMu held.
	stateAt         int
	checkpointEvery int
	// drafter is the speculative draft source (nil: none), spec its
	// settings and specLen the next round's draft length (0: spec's
	// most); spec.go.
	drafter Drafter
	spec    SpecOptions
	specLen int

	mu      sync.Mutex // guards the fields below
	sampler *sample.Sampler
	params  sample.Params
	cached  []int32       // tokens whose K/V are in the cache, in order
	logits  []float32     // of the most recent step, unless only its head was read
	head    *backend.Head // of the most recent step when the backend reduced it
	history []int32       // tokens before the most recent step, for penalties
	// logitsBatch: logits is a row of a verification batch, which goes
	// back to no pool (recycleLogits).
	logitsBatch bool
	// previews counts Preview calls reading a logits slice outside mu: a
	// replaced slice goes back to the backend (recycleLogits) only while
	// none is
	previews int
}

// Load opens the model file, builds the tokenizer, chat template and backend.
func Load(ctx context.Context, path string, opts Options) (*Session, error) {
	start := time.Now()
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	var s *Session
	err = guardMapped(f.Path, "load it again", func() (err error) {
		s, err = newSession(ctx, f, opts)
		return err
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	if opts.Spec.Mode != "" && opts.Spec.Mode != SpecOff {
		if err := s.SetSpec(opts.Spec); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.info.LoadTime = time.Since(start)
	return s, nil
}

// beforeBackend, when set (tests), runs between reading the model's
// declarations and building the backend, which packs or uploads weights.
var beforeBackend func(f *gguf.File)

func newSession(ctx context.Context, f *gguf.File, opts Options) (*Session, error) {
	m, err := arch.Load(f)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() != m.Vocab || m.TokenEmbd.Rows != tok.VocabSize() {
		return nil, &gguf.FormatError{Path: f.Path, Field: `tensor "token_embd.weight"`,
			Msg: fmt.Sprintf("has %d rows but the vocabulary has %d tokens", m.TokenEmbd.Rows, tok.VocabSize())}
	}
	tmpl, templateNote, err := pickTemplate(ctx, f, m.Arch, opts.Template)
	if err != nil {
		return nil, err
	}
	ctxSize, err := contextWindow(opts.ContextSize, m.TrainCtx)
	if err != nil {
		return nil, err
	}
	if opts.KVType == "" {
		opts.KVType = backend.KVF16
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.KVTypeV == "" {
		opts.KVTypeV = opts.KVType
	}
	for _, t := range []backend.KVType{opts.KVType, opts.KVTypeV} {
		if !t.Known() {
			return nil, fmt.Errorf("unknown KV cache type %q (%v)", t, backend.KVTypes)
		}
	}
	beOpts := backend.Options{ContextSize: ctxSize, Threads: opts.Threads, KVType: opts.KVType, KVTypeV: opts.KVTypeV, Device: opts.Device, DeviceHead: opts.DeviceHead}
	choice, err := ChooseBackend(opts.Backend, opts.Device)
	if err != nil {
		return nil, err
	}
	// The CPU backend's cache is host memory; a Vulkan device reports its
	// own allocation failures.
	if choice.Backend == "cpu" {
		if err := checkContextFits(m, ctxSize, opts.KVType, opts.KVTypeV, memAvailable()); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	if beforeBackend != nil {
		beforeBackend(f)
	}
	be, err := NewBackend(choice.Backend, m, beOpts)
	if err != nil && choice.Backend == "vulkan" && opts.Backend != "vulkan" {
		// auto picked a GPU that cannot take the model (memory, driver,
		// a recipe no shader runs yet): the CPU needs none of that.
		choice = Choice{"cpu", fmt.Sprintf("auto: the GPU failed (%v); native CPU kernels", err)}
		if errors.Is(err, backend.ErrUnsupported) {
			choice.Reason = "auto: the Vulkan backend does not run this model yet; native CPU kernels"
		}
		be, err = NewBackend("cpu", m, beOpts)
	}
	if err != nil {
		if choice.Backend == "vulkan" && !errors.Is(err, backend.ErrUnsupported) {
			// Out of device memory, no device, a driver fault: the
			// reference backend needs none of that.
			return nil, fmt.Errorf("%w; the model may still run with --backend cpu", err)
		}
		return nil, err
	}
	params := opts.Params
	if params == (sample.Params{}) {
		params = sample.Defaults()
	}
	s := &Session{file: f, model: m, tok: tok, tmpl: tmpl, be: be, ctxSize: ctxSize, beOpts: beOpts,
		params: params, sampler: sample.New(params), checkpointEvery: defaultCheckpointEvery}
	s.info = ModelInfo{
		Name: m.Name, Path: f.Path, Arch: m.Arch, Params: m.Params(), FileType: m.FileType(),
		ContextSize: ctxSize, TrainContext: m.TrainCtx, Vocab: m.Vocab, Layers: m.Config.Layers,
		KVHeads: m.KVHeads, HeadDim: m.HeadDim, KVType: backend.KVName(opts.KVType, opts.KVTypeV),
		Backend: be.Name(), Device: be.Memory().Device, Completion: tmpl == nil,
		BackendReason: choice.Reason, TemplateNote: templateNote, Experts: m.MoE.Experts, ExpertsUsed: m.MoE.ExpertsUsed,
		Gating: m.RoutingRule(),
	}
	if m.RecurrentLayers() > 0 {
		s.info.RecurrentLayers = m.RecurrentLayers()
		for i := range m.Layers {
			s.info.LayerKinds = append(s.info.LayerKinds, m.Layers[i].Config.Kind.String())
			if m.Layers[i].Config.Kind == arch.KindFFN {
				s.info.FFNLayers++
			}
		}
	}
	if a := m.MLA; a.KVLora > 0 {
		s.info.MLA = &MLAInfo{Latent: a.KVLora, Rope: a.Rope, Heads: m.Heads, Key: a.Nope + a.Rope, Value: a.V}
	}
	s.info.KVLayout, s.info.KVShared, s.info.PLE = layerLayout(m, be.Memory())
	s.info.KVSharing = kvSharing(m)
	if s.info.Name == "" {
		s.info.Name = filepath.Base(f.Path)
	}
	if tmpl != nil {
		s.info.TemplateName = tmpl.Name()
	}
	return s, nil
}

// pickTemplate is the chat template a session uses: the model's own, a
// built-in in its place when the model's cannot be used (note says why),
// none for plain completion (asked for, or when the model's cannot be used
// and is like no built-in: plain completion still works, which beats
// refusing the model; note says why), or the built-in force names.
func pickTemplate(ctx context.Context, f *gguf.File, arch, force string) (t *chat.Template, note string, err error) {
	switch force {
	case "none":
		return nil, "", nil
	case "":
		src, _, err := f.String("tokenizer.chat_template")
		if err != nil {
			return nil, "", err
		}
		t, err := chat.FromModelContext(ctx, src, arch)
		if errors.Is(err, chat.ErrNoTemplate) {
			return nil, fmt.Sprintf("the model's chat template is not usable (%v): plain text completion instead", err), nil
		}
		return t, t.FallbackReason(), err
	}
	t, err = chat.Builtin(force)
	return t, "", err
}

// Close releases the backend and the mapped file.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.genMu.Lock()
		defer s.genMu.Unlock()
		err := s.be.Close()
		if s.drafter != nil {
			if derr := s.drafter.Close(); err == nil {
				err = derr
			}
		}
		if cerr := s.file.Close(); err == nil {
			err = cerr
		}
		s.closeErr = err
	})
	return s.closeErr
}

// Info describes the model and how it runs.
func (s *Session) Info() ModelInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// Tokenizer exposes the model's tokenizer (for the tokenize command and tests).
func (s *Session) Tokenizer() *tokenizer.Tokenizer { return s.tok }

// TokenText is the raw text of a token, for displaying candidates.
func (s *Session) TokenText(id int32) string { return string(s.tok.Piece(id)) }

// SetParams changes the sampler settings; the next token uses them.
func (s *Session) SetParams(p sample.Params) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampler.SetParams(p)
	s.params = s.sampler.Params() // as clamped by the sampler
}

// Params returns the current sampler settings.
func (s *Session) Params() sample.Params {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params
}

// Preview re-ranks the most recent distribution under p without sampling.
// When only the head of it was read and p needs more (penalties, top-k
// off), the whole logits are fetched from the backend, unless a newer step
// has replaced them: then there is nothing to preview until it is sampled.
func (s *Session) Preview(p sample.Params) (sample.Result, bool) {
	s.mu.Lock()
	logits, head, history, be := s.logits, s.head, s.history, s.be
	s.previews++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.previews--
		s.mu.Unlock()
	}()
	if logits == nil && head != nil {
		if n := sample.HeadSize(p, history); n > 0 && n <= len(head.IDs) {
			return sample.PreviewHead(p, sampleHead(head)), true
		}
		hb, ok := be.(backend.HeadBackend)
		if !ok {
			return sample.Result{}, false
		}
		var err error
		if logits, err = hb.LastLogits(head.Seq); err != nil {
			return sample.Result{}, false
		}
		s.mu.Lock()
		if s.head == head {
			s.logits = logits
		}
		s.mu.Unlock()
	}
	if logits == nil {
		return sample.Result{}, false
	}
	return sample.Preview(p, logits, history), true
}

// Stats is a snapshot of the KV cache and memory.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	used, be := len(s.cached), s.be
	s.mu.Unlock()
	mem := be.Memory()
	st := Stats{
		ContextUsed: used, ContextSize: s.ctxSize,
		KVUsed: mem.KVUsedAt(used), KVAllocated: mem.KVAllocated, KVPerToken: mem.KVPerToken,
		Weights: mem.Weights, Scratch: mem.Scratch, WeightsActive: mem.Weights,
	}
	if m := s.model; m.MoE.Experts > 0 {
		st.WeightsActive = m.ActiveWeightBytes()
		st.ActiveFormula = m.ActiveFormula()
	}
	st.StateBytes, st.StateFormula, st.CheckpointBytes = mem.StateBytes, mem.StateFormula, mem.CheckpointBytes
	if sb, ok := be.(backend.StateBackend); ok && mem.StateBytes > 0 {
		st.Checkpoints = sb.Checkpoints()
	}
	for _, r := range mem.KVRings {
		st.KVWindows = append(st.KVWindows, KVWindow{Layers: r.Layers, Window: r.Window})
	}
	return st
}

// SwitchBackend replaces the compute backend, for example with "cpu" after
// the GPU was lost. The KV cache starts empty; the conversation itself lives
// with the caller, so the next Generate simply recomputes its prompt.
func (s *Session) SwitchBackend(name string) error {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	choice, err := ChooseBackend(name, s.beOpts.Device)
	if err != nil {
		return fmt.Errorf("switch to the %s backend: %w", name, err)
	}
	be, err := NewBackend(choice.Backend, s.model, s.beOpts)
	if err != nil {
		return fmt.Errorf("switch to the %s backend: %w", choice.Backend, err)
	}
	old := s.be
	s.mu.Lock()
	s.be = be
	s.cached = s.cached[:0]
	s.stateAt = 0
	s.logits, s.head = nil, nil
	s.info.Backend, s.info.Device, s.info.BackendReason = be.Name(), be.Memory().Device, choice.Reason
	s.info.KVLayout, s.info.KVShared, s.info.PLE = layerLayout(s.model, be.Memory())
	s.mu.Unlock()
	if err := old.Close(); err != nil {
		return fmt.Errorf("close the %s backend: %w", old.Name(), err)
	}
	return nil
}
