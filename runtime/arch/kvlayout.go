package arch

import (
	"fmt"
	"strings"
)

// KVGroup is a set of layers whose caches hold the same number of
// positions at the same width: the full-attention layers hold the whole
// context, a sliding-window layer only its window (used as a ring).
type KVGroup struct {
	Layers    int
	Positions int // positions each layer's cache holds
	Window    int // the attention window; 0 for full attention
	KVHeads   int
	HeadDim   int
}

// KVGroups describes the KV cache of a context of ctx positions, full
// layers first. Recurrent layers keep a state and KV-shared layers read
// another's cache: neither owns one, so neither is in a group.
func (m *Model) KVGroups(ctx int) []KVGroup {
	var out []KVGroup
	add := func(g KVGroup) {
		for i := range out {
			if o := out[i]; o.Positions == g.Positions && o.Window == g.Window && o.KVHeads == g.KVHeads && o.HeadDim == g.HeadDim {
				out[i].Layers++
				return
			}
		}
		out = append(out, g)
	}
	for _, sliding := range []bool{false, true} {
		for i := range m.Layers {
			lc := &m.Layers[i].Config
			if !m.OwnsKV(i) {
				continue // a KV-shared layer reads another's cache; a recurrent one keeps a state
			}
			w := lc.Window
			if w >= ctx {
				w = 0 // the window covers the context: no saving, full attention in effect
			}
			if (w > 0) == sliding {
				add(KVGroup{Layers: 1, Positions: lc.KVPositions(ctx), Window: w, KVHeads: lc.KVHeads, HeadDim: lc.HeadDim})
			}
		}
	}
	return out
}

// KVShared is how many layers read another layer's cache.
func (m *Model) KVShared() int {
	n := 0
	for i := range m.Layers {
		if m.Layers[i].Config.SharesKV(i) {
			n++
		}
	}
	return n
}

// KVFormula says in one line how the KV cache of ctx positions adds up, e.g.
// "(1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads × 128 head dim ×
// 2 (K,V) × 2 B = 576.0 KiB". Where the groups differ in width each term
// carries its own kv heads and head dim, and KV-shared layers are named
// after the total (they add nothing to it).
func (m *Model) KVFormula(ctx, elemBytes int) string {
	groups := m.KVGroups(ctx)
	uniform := true
	for _, g := range groups {
		uniform = uniform && g.KVHeads == groups[0].KVHeads && g.HeadDim == groups[0].HeadDim
	}
	var parts []string
	for _, g := range groups {
		what := fmt.Sprintf("%d ctx", g.Positions)
		if g.Window > 0 {
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
	out := fmt.Sprintf("%s%s × 2 (K,V) × %d B = %d B", pos, width, elemBytes, m.KVBytes(ctx, elemBytes))
	if n := m.KVShared(); n > 0 {
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
