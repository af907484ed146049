package vk

import (
	"fmt"

	"vkchat/runtime/backend"

	"vkchat/runtime/vk/vulkan"
)

// cache is what the device keeps of a session between steps: each
// attention layer's keys and values (a ring where the layer's window is
// shorter than the context), the tokens written, and the recurrent
// layers' state with its host checkpoints (state.go).
type cache struct {
	kc, vc []*vulkan.Buffer // per layer, head-major [kv head][slot][dim]
	// latentV is where rope.comp's value write of the latent-attention
	// layers goes, one buffer for all of them and read by none: their
	// values are their keys' rows (mla.go), so they hold no value cache
	latentV *vulkan.Buffer
	// ringLow is, per layer, the lowest position its cache still holds
	// (only a ring's moves): a rewind to pos needs pos's window above it,
	// or a replay of history, the token at every position written.
	ringLow []int
	history []int32

	// The recurrent layers' state, per layer and nil for the others: a
	// DeltaNet layer's conv and matrix states (deltanet.go), a short
	// convolution's conv state (shortconv.go). One checkpoint and rewind
	// code serves both.
	convState, mat []*vulkan.Buffer
	stateBytes     uint64
	state          vkState // where the state is, and the saved copies
}

// allocate creates the KV cache of every attention layer as plans lay it
// out, for a context of opts.ContextSize positions of opts.KVType.
func (c *cache) allocate(d *gpu, plans []layerPlan, opts backend.Options) error {
	c.ringLow = make([]int, len(plans))
	c.history = make([]int32, opts.ContextSize)
	for l, pl := range plans {
		if pl.recurrent {
			c.kc, c.vc = append(c.kc, nil), append(c.vc, nil) // a state, no cache (deltanet.go)
			continue
		}
		if pl.shared(l) {
			// a KV-shared layer reads its source layer's cache
			c.kc, c.vc = append(c.kc, c.kc[pl.kvLayer]), append(c.vc, c.vc[pl.kvLayer])
			continue
		}
		kvBytes := uint64(pl.kvHeads) * uint64(pl.slots) * uint64(pl.headDim) * uint64(opts.KVType.Bytes())
		vBytes := kvBytes
		if kvSplit(opts.KVType, opts.ValueType()) {
			kvBytes = kvQuantBytes(opts.KVType, pl.kvHeads*pl.slots, pl.headDim)
			vBytes = kvQuantBytes(opts.ValueType(), pl.kvHeads*pl.slots, pl.headDim)
		}
		// The cache is written 4 bytes per texel: that view bounds the size.
		if lim := d.Info.Limits.MaxTexelElements * 4; kvBytes > lim {
			return fmt.Errorf("a KV cache of %d positions needs %d bytes per layer for keys, over the %d a texel buffer spans on %s: use a smaller context",
				pl.slots, kvBytes, lim, d.Info.Name)
		}
		what := fmt.Sprintf("%d positions", pl.slots)
		if pl.slots < opts.ContextSize {
			what = fmt.Sprintf("a ring of %d positions for a window of %d", pl.slots, pl.window)
		}
		k, err := d.NewBuffer(fmt.Sprintf("KV cache keys, layer %d (%s)", l, what), kvBytes, vulkan.MemDevice)
		if err != nil {
			return err
		}
		if pl.latent {
			if c.latentV == nil || c.latentV.Size < kvBytes {
				if c.latentV, err = d.NewBuffer("latent attention's unread value rows", kvBytes, vulkan.MemDevice); err != nil {
					return err
				}
			}
			c.kc, c.vc = append(c.kc, k), append(c.vc, nil)
			continue
		}
		v, err := d.NewBuffer(fmt.Sprintf("KV cache values, layer %d (%s)", l, what), vBytes, vulkan.MemDevice)
		if err != nil {
			return err
		}
		c.kc, c.vc = append(c.kc, k), append(c.vc, v)
	}
	return nil
}

// kvBytes is the KV cache allocated, each shared cache counted once.
func (c *cache) kvBytes(plans []layerPlan) uint64 {
	var kv uint64
	for l := range c.kc {
		if c.kc[l] != nil && !plans[l].shared(l) {
			kv += c.kc[l].Size
			if c.vc[l] != nil { // nil: a latent layer's values are its keys
				kv += c.vc[l].Size
			}
		}
	}
	return kv
}

// ringsKeep reports whether every ring cache still holds the positions a
// step at pos sees (a rewind further back than a ring's spare room finds
// them overwritten); context is the positions a full cache holds.
func (c *cache) ringsKeep(plans []layerPlan, context, pos int) bool {
	for l, pl := range plans {
		if pl.slots < context && pos > 0 && max(pos-pl.window+1, 0) < c.ringLow[l] {
			return false
		}
	}
	return true
}

// wrote records that positions pos..pos+n-1 were written: a ring's lowest
// held position moves up past what they overwrote.
func (c *cache) wrote(plans []layerPlan, pos, n int) {
	for l, pl := range plans {
		if pos == 0 {
			c.ringLow[l] = 0 // a fresh start: nothing before it is needed
		}
		c.ringLow[l] = max(c.ringLow[l], pos+n-pl.slots)
	}
}
