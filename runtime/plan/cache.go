package plan

import (
	"fmt"
	"os"
	"strings"

	"vkchat/runtime/backend"
)

// CacheSlot is one layer's KV cache: KVHeads·HeadDim values per position
// for K and again for V. A sliding-window layer (Window > 0) needs only its
// window, kept as a ring; KV-shared layers read their source's slot and own
// none.
//
// An MLA slot (Latent > 0) holds keys only: one row per position of
// Latent latent values then the shared RoPE key (KVHeads 1, HeadDim the
// whole row), and its values are the latent part of the same row, as
// llama.cpp's K-only cache views them. Decompressed holds what plain
// multi-head attention would cache per position instead (heads ×
// (key + value head size)), for the memory figures' comparison.
type CacheSlot struct {
	Layer            int // the layer that writes it
	KVHeads, HeadDim int
	Window           int
	Latent           int
	Decompressed     int
}

// rowBytes is one position of the slot: a key row and a value row in
// their types, or an MLA slot's key row alone.
func (s CacheSlot) rowBytes(k, v backend.KVType) int64 {
	if s.Latent > 0 {
		return k.RowBytes(s.Width())
	}
	return k.RowBytes(s.Width()) + v.RowBytes(s.Width())
}

// Width is one position's key (or value) row.
func (s CacheSlot) Width() int { return s.KVHeads * s.HeadDim }

// Positions is how many positions the slot holds for a context of ctx.
// ringExtra is what an executor adds to a ring beyond the window (the
// Vulkan runtime stores a whole prefill chunk before its first token
// attends, so its rings hold window + chunk − 1); the plan itself adds
// nothing.
func (s CacheSlot) Positions(ctx, ringExtra int) int {
	if s.Window > 0 && s.Window+ringExtra < ctx {
		return s.Window + ringExtra
	}
	return ctx
}

// Ring reports whether the slot is a ring smaller than the context.
func (s CacheSlot) Ring(ctx, ringExtra int) bool { return s.Positions(ctx, ringExtra) < ctx }

// StateSlot is a recurrent layer's state, always F32: the conv's last
// inputs and, for a DeltaNet layer, the delta-rule matrices.
type StateSlot struct {
	Layer                    int
	Mixer                    Mixer
	ConvFloats, MatrixFloats int
}

// Bytes is the slot's size.
func (s StateSlot) Bytes() int64 { return 4 * int64(s.ConvFloats+s.MatrixFloats) }

// CacheGroups groups the slots by positions and width, full ones first,
// in the form a backend reports them (backend.Memory.SetCacheLayout).
func (p *Plan) CacheGroups(ringExtra int) []backend.KVGroup {
	var out []backend.KVGroup
	for _, ring := range []bool{false, true} {
		for _, s := range p.Cache {
			if s.Ring(p.Context, ringExtra) != ring {
				continue
			}
			g := backend.KVGroup{Layers: 1, Positions: s.Positions(p.Context, ringExtra), KVHeads: s.KVHeads, HeadDim: s.HeadDim}
			if ring {
				g.Window = s.Window
			}
			found := false
			for i := range out {
				if o := out[i]; o.Positions == g.Positions && o.Window == g.Window && o.KVHeads == g.KVHeads && o.HeadDim == g.HeadDim {
					out[i].Layers++
					found = true
					break
				}
			}
			if !found {
				out = append(out, g)
			}
		}
	}
	return out
}

// CheckCacheTypes says whether the cache can hold keys of type k and values
// of type v: both known, and a block-quantized type only where every
// slot's head size is a multiple of its 32-value blocks (as llama.cpp
// refuses -ctk/-ctv otherwise).
func (p *Plan) CheckCacheTypes(k, v backend.KVType) error {
	for _, t := range []backend.KVType{k, v} {
		if !t.Known() {
			return fmt.Errorf("unknown KV cache type %q (%v)", t, backend.KVTypes)
		}
	}
	for _, s := range p.Cache {
		if s.Latent > 0 && k != v {
			return fmt.Errorf("a %s KV cache is not possible for layer %d's multi-head latent attention (MLA): its values are the latent part of its key rows, one type for both", backend.KVName(k, v), s.Layer)
		}
	}
	if !k.Quantized() && !v.Quantized() {
		return nil
	}
	for _, s := range p.Cache {
		if s.Latent > 0 {
			// llama.cpp quantizes the row as a whole; the row here is
			// read as the values too (Latent of it), which the quantized
			// attention does not do
			return fmt.Errorf("a %s KV cache is not supported for layer %d's multi-head latent attention (MLA), whose cache row is %d latent + %d RoPE values: use f16 or f32", backend.KVName(k, v), s.Layer, s.Latent, s.HeadDim-s.Latent)
		}
		if s.HeadDim%32 != 0 {
			return fmt.Errorf("a %s KV cache stores blocks of 32 values inside a head, and layer %d's head size is %d: use f16 or f32", backend.KVName(k, v), s.Layer, s.HeadDim)
		}
	}
	return nil
}

// CacheBytes is the cache's size for keys of type k and values of type v:
// each slot's positions (at ctx, with ringExtra) times the bytes of a key
// row and a value row in their types (a quantized row is whole blocks).
// At a ctx below the plan's it is what the slots hold after ctx positions.
func (p *Plan) CacheBytes(k, v backend.KVType, ctx, ringExtra int) int64 {
	var n int64
	for _, s := range p.Cache {
		n += int64(s.Positions(ctx, ringExtra)) * s.rowBytes(k, v)
	}
	return n
}

// CacheBytesPerToken is what one more position costs across every slot.
func (p *Plan) CacheBytesPerToken(k, v backend.KVType) int64 {
	var n int64
	for _, s := range p.Cache {
		n += s.rowBytes(k, v)
	}
	return n
}

// SharedLayers counts the layers that read another layer's cache.
func (p *Plan) SharedLayers() int {
	n := 0
	for _, l := range p.Layers {
		for _, op := range l.Ops {
			if a, ok := op.(Attention); ok && a.Shared {
				n++
			}
		}
	}
	return n
}

// StateBytes is every recurrent layer's state.
func (p *Plan) StateBytes() int64 {
	var n int64
	for _, s := range p.State {
		n += s.Bytes()
	}
	return n
}

// CacheFormula says how the cache of keys of type k and values of type v
// adds up, e.g. "(1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads ×
// 128 head dim × 2 (K,V) × 2 B = 576 B": "× (34/32 B + 2 B) (K+V)" where
// the types differ. Where the groups differ in width each term carries
// its own; a ring larger than its window (ringExtra > 0) says so.
func (p *Plan) CacheFormula(k, v backend.KVType, ringExtra int) string {
	if f, ok := p.latentFormula(k); ok {
		return f
	}
	groups := p.CacheGroups(ringExtra)
	uniform := true
	for _, g := range groups {
		uniform = uniform && g.KVHeads == groups[0].KVHeads && g.HeadDim == groups[0].HeadDim
	}
	var parts []string
	for _, g := range groups {
		what := fmt.Sprintf("%d ctx", g.Positions)
		switch {
		case g.Window > 0 && g.Positions > g.Window:
			what = fmt.Sprintf("%d ring (window %d + %d)", g.Positions, g.Window, g.Positions-g.Window)
		case g.Window > 0:
			what = fmt.Sprintf("%d window", g.Positions)
		}
		term := fmt.Sprintf("%d %s × %s", g.Layers, plural(g.Layers, "layer"), what)
		if !uniform {
			term += fmt.Sprintf(" × %d kv heads × %d head dim", g.KVHeads, g.HeadDim)
		}
		parts = append(parts, term)
	}
	pos := strings.Join(parts, " + ")
	if len(parts) > 1 {
		pos = "(" + pos + ")"
	}
	width := ""
	if uniform && len(groups) > 0 {
		width = fmt.Sprintf(" × %d kv heads × %d head dim", groups[0].KVHeads, groups[0].HeadDim)
	}
	per := fmt.Sprintf("2 (K,V) × %s", k.PerValue())
	if k != v {
		per = fmt.Sprintf("(%s + %s) (K+V)", k.PerValue(), v.PerValue())
	}
	out := fmt.Sprintf("%s%s × %s = %d B", pos, width, per, p.CacheBytes(k, v, p.Context, ringExtra))
	if n := p.SharedLayers(); n > 0 {
		out += fmt.Sprintf(" (+ %d KV-shared %s, no cache of their own)", n, plural(n, "layer"))
	}
	return out
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// latentFormula is CacheFormula for a cache of MLA slots alone (all of
// one shape, full context), e.g. "4 layers × 640 ctx × (64 latent + 16
// rope) × 2 B (keys only: the values are the latent) = 409600 B; plain
// multi-head attention would cache 320 values a position, not 80".
func (p *Plan) latentFormula(k backend.KVType) (string, bool) {
	if len(p.Cache) == 0 {
		return "", false
	}
	s0 := p.Cache[0]
	for _, s := range p.Cache {
		if s.Latent == 0 || s.Window > 0 || s.HeadDim != s0.HeadDim || s.Latent != s0.Latent || s.Decompressed != s0.Decompressed {
			return "", false
		}
	}
	n := len(p.Cache)
	return fmt.Sprintf("%d %s × %d ctx × (%d latent + %d rope) × %s (keys only: the values are the latent) = %d B; plain multi-head attention would cache %d values a position, not %d",
		n, plural(n, "layer"), p.Context, s0.Latent, s0.HeadDim-s0.Latent, k.PerValue(), p.CacheBytes(k, k, p.Context, 0), s0.Decompressed, s0.HeadDim), true
}

// CacheRotation is llama.cpp's Hadamard rotation of a quantized KV cache
// (PR #21038) for keys of type k and values of type v, as the orders of
// the orthonormal Walsh-Hadamard matrices (0: none): with a quantized K,
// Q and K are multiplied after RoPE by one of order rotK (the largest
// power of two ≥ 64 dividing the head size) on each rotK-chunk of a head
// before K is cached; with a quantized V, V is multiplied by one of order
// 64 before it is cached and the attention output by it again (it is its
// own inverse). It leaves exact attention unchanged but changes what gets
// quantized, and an engine that skips it misses llama.cpp by about as
// much as the quantization itself. It applies only where every cache slot
// has one head size, a multiple of 64. VKCHAT_KV_ROTATE=off turns it off,
// as llama.cpp's LLAMA_ATTN_ROT_DISABLE does, to compare.
func (p *Plan) CacheRotation(k, v backend.KVType) (rotK, rotV int) {
	if !k.Quantized() && !v.Quantized() || os.Getenv("VKCHAT_KV_ROTATE") == "off" {
		return 0, 0
	}
	hd := -1
	for _, s := range p.Cache {
		if hd == -1 || hd == s.HeadDim {
			hd = s.HeadDim
		} else {
			hd = 0 // head sizes differ: no rotation
		}
	}
	if hd <= 0 || hd%64 != 0 {
		return 0, 0
	}
	if k.Quantized() {
		rotK = 64
		for hd%(2*rotK) == 0 {
			rotK *= 2
		}
	}
	if v.Quantized() {
		rotV = 64
	}
	return rotK, rotV
}
