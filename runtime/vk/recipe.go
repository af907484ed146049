package vk

import (
	"fmt"
	"math"
	"strings"

	"vkchat/runtime/arch"
)

// What a model's block recipe (arch.Config.Block, the multipliers and
// each layer's LayerConfig) asks of the graph, resolved once at load.

// recipe holds the model-wide numbers the kernels take.
type recipe struct {
	embedScale    float32 // embeddings ×
	residualScale float32 // each branch × before its residual add
	qScale        float32 // Q × after RoPE (1 unless the model scales Q)
	scoreScale    float32 // scores × (÷ the soft-cap when there is one)
	attnCap       float32 // 0: no attention soft-cap
	logitScale    float32
	finalCap      float32 // 0: no final soft-cap
	qkNorm        uint32  // rope.comp's QKNORM
	act           uint32  // matvec.comp's ACT: 0 SiLU, 1 GELU-tanh, 2 gpt-oss's clamped SwiGLU
	// postBranch: a branch's output goes through residual.comp (a norm
	// after it, or a scale) instead of the mat-vec's residual epilogue.
	postBranch bool
}

// one is x, or 1 when x is unset (a Config built without the loader's
// resolution, as tests do).
func one(x float32) float32 {
	if x == 0 {
		return 1
	}
	return x
}

func newRecipe(c *arch.Config) recipe {
	r := recipe{
		embedScale:    one(c.EmbedScale),
		residualScale: one(c.ResidualScale),
		logitScale:    one(c.LogitScale),
		attnCap:       c.AttnSoftcap,
		finalCap:      c.FinalSoftcap,
		qScale:        1,
		qkNorm:        uint32(c.Block.QKNorm),
	}
	scale := c.AttnScale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	}
	r.scoreScale = scale
	if c.ScaleQ {
		r.qScale, r.scoreScale = scale, 1
	}
	if r.attnCap != 0 {
		// as ggml's flash attention: scale /= cap; s = cap·tanh(s·scale)
		r.scoreScale /= r.attnCap
	}
	switch c.Block.Act {
	case arch.ActGELUTanh:
		r.act = 1
	case arch.ActSwiGLUOAI:
		r.act = 2 // glu.glsl's swiglu_oai
	}
	r.postBranch = c.Block.PostNorm || r.residualScale != 1
	return r
}

// ropeTable is one rotation's cos/sin table in the step buffer: its base
// and scale, the dims it rotates, and whether the model's frequency
// factors apply (not on gemma4's sliding layers).
type ropeTable struct {
	base, scale float32
	dims        int
	factors     bool
}

// layerPlan is what differs between layers in the recording.
type layerPlan struct {
	rope   bool
	table  int // index into Backend.ropeTables
	window int // 0: full causal attention
	slots  int // cache positions held (a ring when < the context)
	// recurrent: a DeltaNet layer, which keeps a state and no cache
	recurrent bool
	// the layer's geometry (arch.LayerConfig), and the layer whose cache
	// it attends to (itself unless KV-shared)
	headDim, kvHeads, ff, dims int
	kvLayer                    int
}

// shared reports whether layer l reads another layer's cache.
func (p layerPlan) shared(l int) bool { return p.kvLayer != l }

// cacheSlots is how many positions a layer's cache holds for a context of
// ctx. A sliding-window layer keeps a ring: its window plus the positions a
// prefill chunk writes before its first token attends (every key of a chunk
// is stored before attention runs, so a ring of only the window would lose
// keys the chunk's first tokens still see), as llama.cpp sizes its SWA
// cache at window + batch.
func cacheSlots(lc arch.LayerConfig, ctx int) int {
	if lc.Window > 0 && lc.Window+prefillChunk-1 < ctx {
		return lc.Window + prefillChunk - 1
	}
	return ctx
}

// planLayers resolves each layer's RoPE table, window and cache size. A
// zero LayerConfig (a model assembled without the loader, as tests do) is
// the global RoPE on a full cache.
func (b *Backend) planLayers() error {
	c := &b.cfg
	b.plans = b.plans[:0]
	b.ropeTables = b.ropeTables[:0]
	for i := range b.m.Layers {
		lc := b.m.Layers[i].Config
		if lc.HeadDim == 0 {
			// a model assembled without the loader: the model-wide
			// geometry, each layer its own cache
			if lc == (arch.LayerConfig{}) {
				lc = arch.LayerConfig{Rope: true, RopeBase: c.Rope.Base, RopeScale: c.Rope.Scale}
			}
			lc.HeadDim, lc.KVHeads, lc.FF, lc.RopeDims, lc.KVLayer = c.HeadDim, c.KVHeads, c.FF, c.Rope.Dims, i
		}
		if lc.Window < 0 {
			return fmt.Errorf("layer %d: sliding window %d is negative", i, lc.Window)
		}
		if lc.HeadDim%8 != 0 {
			return fmt.Errorf("layer %d: head size %d is not a multiple of 8, which the attention kernel needs", i, lc.HeadDim)
		}
		if lc.KVLayer < 0 || lc.KVLayer > i {
			return fmt.Errorf("layer %d: reads the cache of layer %d, not an earlier one", i, lc.KVLayer)
		}
		p := layerPlan{rope: lc.Rope, window: lc.Window, slots: cacheSlots(lc, b.opts.ContextSize), recurrent: lc.Kind.Recurrent(),
			headDim: lc.HeadDim, kvHeads: lc.KVHeads, ff: lc.FF, dims: lc.RopeDims, kvLayer: lc.KVLayer}
		if lc.KVLayer != i {
			p.slots = b.plans[lc.KVLayer].slots
		}
		if lc.Rope {
			t := ropeTable{base: lc.RopeBase, scale: one(lc.RopeScale), dims: lc.RopeDims, factors: !lc.NoRopeFactors}
			if !(t.base > 0) {
				return fmt.Errorf("layer %d: RoPE base %g must be positive", i, t.base)
			}
			p.table = -1
			for j, have := range b.ropeTables {
				if have == t {
					p.table = j
				}
			}
			if p.table < 0 {
				p.table = len(b.ropeTables)
				b.ropeTables = append(b.ropeTables, t)
			}
		}
		b.plans = append(b.plans, p)
	}
	b.ringLow = make([]int, len(b.plans))
	b.history = make([]int32, b.opts.ContextSize)
	if len(b.ropeTables) == 0 {
		// every layer is NoPE; the kernels still bind a table
		b.ropeTables = append(b.ropeTables, ropeTable{base: c.Rope.Base, scale: one(c.Rope.Scale), dims: c.Rope.Dims, factors: true})
	}
	return nil
}

// ropeTableBytes is the room one table takes in the step buffer, aligned
// so each can be bound at its own offset.
func (b *Backend) ropeTableBytes() int {
	dims := b.cfg.Rope.Dims
	for _, t := range b.ropeTables {
		dims = max(dims, t.dims)
	}
	return int(alignUp(uint64(8*prefillChunk*(dims/2)), regionAlign))
}

// kvGroup is a set of layers whose caches hold the same positions at the
// same width.
type kvGroup struct {
	layers, slots, window int
	kvHeads, headDim      int
}

// kvGroups groups the layers that own a cache by size and width, full
// layers first.
func (b *Backend) kvGroups() []kvGroup {
	var out []kvGroup
	for _, ring := range []bool{false, true} {
		for l, pl := range b.plans {
			if pl.recurrent || (pl.slots < b.opts.ContextSize) != ring || pl.shared(l) {
				continue
			}
			g := kvGroup{layers: 1, slots: pl.slots, kvHeads: pl.kvHeads, headDim: pl.headDim}
			if ring {
				g.window = pl.window
			}
			found := false
			for i := range out {
				if out[i].slots == g.slots && out[i].window == g.window && out[i].kvHeads == g.kvHeads && out[i].headDim == g.headDim {
					out[i].layers++
					found = true
				}
			}
			if !found {
				out = append(out, g)
			}
		}
	}
	return out
}

// kvFormula says how the cache adds up, as arch.KVFormula does for the
// reference backend, with this backend's ring size (window + a prefill
// chunk - 1).
func (b *Backend) kvFormula(total int64) string {
	var parts []string
	groups := b.kvGroups()
	uniform := true
	for _, g := range groups {
		uniform = uniform && g.kvHeads == groups[0].kvHeads && g.headDim == groups[0].headDim
	}
	for _, g := range groups {
		layers := "layers"
		if g.layers == 1 {
			layers = "layer"
		}
		what := fmt.Sprintf("%d ctx", g.slots)
		if g.window > 0 {
			what = fmt.Sprintf("%d ring (window %d + %d)", g.slots, g.window, g.slots-g.window)
		}
		if !uniform {
			what += fmt.Sprintf(" × %d kv heads × %d head dim", g.kvHeads, g.headDim)
		}
		parts = append(parts, fmt.Sprintf("%d %s × %s", g.layers, layers, what))
	}
	pos := strings.Join(parts, " + ")
	if len(parts) > 1 {
		pos = "(" + pos + ")"
	}
	width := ""
	if uniform && len(groups) > 0 {
		width = fmt.Sprintf(" × %d kv heads × %d head dim", groups[0].kvHeads, groups[0].headDim)
	}
	out := fmt.Sprintf("%s%s × 2 (K,V) × %d B = %d B", pos, width, b.opts.KVType.Bytes(), total)
	if n := b.m.KVShared(); n > 0 {
		out += fmt.Sprintf(" (+ %d KV-shared layers, no cache of their own)", n)
	}
	return out
}
