package vk

import (
	"fmt"

	"vkchat/runtime/plan"
)

// What the recording takes from the plan per layer, resolved once at load.

// ropeTable is one plan rotation's cos/sin table in the step buffer: its
// base and scale, the dims it rotates, its frequency factors (nil where
// they do not apply: gemma4's sliding layers), YaRN's blend and the cos/sin
// multiplier.
type ropeTable struct {
	base, scale float32
	dims        int
	factors     []float32
	yarn        *plan.YaRN
	mscale      float32
}

// tableOf is rot's table.
func tableOf(rot plan.Rotation) ropeTable {
	mscale := rot.AttnFactor
	if rot.YaRN != nil {
		mscale *= rot.YaRN.MScale
	}
	return ropeTable{base: rot.Base, scale: rot.Scale, dims: rot.Dims, factors: rot.Factors, yarn: rot.YaRN, mscale: mscale}
}

// layerPlan is what differs between layers in the recording.
type layerPlan struct {
	rope   bool
	table  int // index into graph.ropeTables
	neox   bool
	window int // 0: full causal attention
	slots  int // cache positions held (a ring when < the context)
	// recurrent: a layer without a KV cache (a recurrent mixer, or none)
	recurrent bool
	// latent: a latent-attention layer (mla.go), whose cache is its keys
	latent bool
	// the layer's geometry, and the layer whose cache it attends to
	// (itself unless KV-shared)
	headDim, kvHeads, dims int
	kvLayer                int
}

// shared reports whether layer l reads another layer's cache.
func (p layerPlan) shared(l int) bool { return p.kvLayer != l }

// ringExtra is what this backend adds to a sliding-window layer's ring
// beyond the plan's window: every key of a prefill chunk is stored before
// attention runs, so a ring of only the window would lose keys the chunk's
// first tokens still see (llama.cpp sizes its SWA cache at window + batch).
const ringExtra = prefillChunk - 1

// planLayers takes from the plan what the recording needs per layer: the
// RoPE table, window, cache slot and its size, the geometry. A layer
// without a rotation (NoPE) takes the first rotation's dims and pairing,
// which only pick the rope kernel's variant; a recurrent layer, which
// holds no cache, counts as holding the whole context, so that nothing
// takes it for a ring that lost positions on a rewind.
func (b *Backend) planLayers() error {
	p := b.plan
	b.plans = b.plans[:0]
	b.graph.ropeTables = b.graph.ropeTables[:0]
	for _, rot := range p.Rotations {
		b.graph.ropeTables = append(b.graph.ropeTables, tableOf(rot))
	}
	dims, neox := p.HeadDim, false
	if len(p.Rotations) > 0 {
		dims, neox = p.Rotations[0].Dims, p.Rotations[0].NeoX
	} else {
		// every layer is NoPE; the kernels still bind a table
		b.graph.ropeTables = append(b.graph.ropeTables, ropeTable{base: 10000, scale: 1, dims: dims, mscale: 1})
	}
	for _, l := range p.Layers {
		pl := layerPlan{recurrent: l.Mixer != plan.MixAttention, headDim: p.HeadDim, dims: dims, neox: neox, kvLayer: l.Index, slots: p.Context}
		for _, op := range l.Ops {
			switch o := op.(type) {
			case plan.Attention:
				slot := p.Cache[o.Cache]
				if o.HeadDim%8 != 0 {
					return fmt.Errorf("layer %d: head size %d is not a multiple of 8, which the attention kernel needs", l.Index, o.HeadDim)
				}
				pl.window, pl.headDim, pl.kvHeads, pl.kvLayer = o.Window, o.HeadDim, o.KVHeads, slot.Layer
				pl.slots = slot.Positions(p.Context, ringExtra)
			case plan.MLA:
				// one "KV head" of the cached row (mla.go)
				slot := p.Cache[o.Cache]
				rot := p.Rotations[o.Table]
				pl.headDim, pl.kvHeads, pl.kvLayer, pl.latent = o.Shape.CacheRow(), 1, slot.Layer, true
				pl.slots = slot.Positions(p.Context, ringExtra)
				pl.rope, pl.table, pl.dims, pl.neox = true, o.Table, rot.Dims, rot.NeoX
			case plan.Rope:
				rot := p.Rotations[o.Table]
				pl.rope, pl.table, pl.dims, pl.neox = true, o.Table, rot.Dims, rot.NeoX
			}
		}
		b.plans = append(b.plans, pl)
	}
	return nil
}
