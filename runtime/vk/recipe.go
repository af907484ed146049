package vk

import (
	"fmt"
	"math"
	"slices"

	"vkchat/runtime/arch"
	"vkchat/runtime/plan"
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
	table  int // index into graph.ropeTables
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

// ringExtra is what this backend adds to a sliding-window layer's ring
// beyond the plan's window: every key of a prefill chunk is stored before
// attention runs, so a ring of only the window would lose keys the chunk's
// first tokens still see (llama.cpp sizes its SWA cache at window + batch).
const ringExtra = prefillChunk - 1

// planLayers resolves the model's plan (runtime/plan) and takes from it
// what the recording needs per layer: the RoPE table, window, cache slot
// and its size, the geometry. What a layer lacks (a recurrent layer's
// heads, a NoPE layer's rotated dims, which still pick the rope kernel's
// variant) is the model-wide value; a recurrent layer, which holds no
// cache, counts as holding the whole context, so that nothing takes it
// for a ring that lost positions on a rewind.
func (b *Backend) planLayers() error {
	p, err := plan.Resolve(b.m, b.opts.ContextSize)
	if err != nil {
		return err
	}
	c := &b.cfg
	b.plan = p
	b.plans = b.plans[:0]
	b.graph.ropeTables = b.graph.ropeTables[:0]
	tables := make([]int, len(p.Rotations)) // plan rotation → index in graph.ropeTables, +1
	for _, l := range p.Layers {
		pl := layerPlan{recurrent: l.Mixer != plan.MixAttention, headDim: c.HeadDim, kvHeads: c.KVHeads, dims: c.Rope.Dims, kvLayer: l.Index, slots: p.Context}
		for _, op := range l.Ops {
			switch o := op.(type) {
			case plan.Attention:
				slot := p.Cache[o.Cache]
				if o.HeadDim%8 != 0 {
					return fmt.Errorf("layer %d: head size %d is not a multiple of 8, which the attention kernel needs", l.Index, o.HeadDim)
				}
				pl.window, pl.headDim, pl.kvHeads, pl.kvLayer = o.Window, o.HeadDim, o.KVHeads, slot.Layer
				pl.slots = slot.Positions(p.Context, ringExtra)
			case plan.Rope:
				rot := p.Rotations[o.Table]
				pl.rope, pl.dims = true, rot.Dims
				if tables[o.Table] == 0 {
					// the model's frequency factors are uploaded once;
					// a table says only whether they apply
					t := ropeTable{base: rot.Base, scale: rot.Scale, dims: rot.Dims, factors: rot.Factors != nil}
					idx := slices.Index(b.graph.ropeTables, t)
					if idx < 0 {
						idx = len(b.graph.ropeTables)
						b.graph.ropeTables = append(b.graph.ropeTables, t)
					}
					tables[o.Table] = idx + 1
				}
				pl.table = tables[o.Table] - 1
			}
		}
		b.plans = append(b.plans, pl)
	}
	if len(b.graph.ropeTables) == 0 {
		// every layer is NoPE; the kernels still bind a table
		b.graph.ropeTables = append(b.graph.ropeTables, ropeTable{base: c.Rope.Base, scale: one(c.Rope.Scale), dims: c.Rope.Dims, factors: true})
	}
	return nil
}
