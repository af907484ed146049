package arch

import (
	"fmt"
	"strings"
)

// KVGroup is a set of layers whose caches hold the same number of
// positions: the full-attention layers hold the whole context, a
// sliding-window layer only its window (used as a ring).
type KVGroup struct {
	Layers    int
	Positions int // positions each layer's cache holds
	Window    int // the attention window; 0 for full attention
}

// KVGroups describes the KV cache of a context of ctx positions, full
// layers first; recurrent layers have no KV cache and are left out.
func (m *Model) KVGroups(ctx int) []KVGroup {
	var out []KVGroup
	add := func(g KVGroup) {
		for i := range out {
			if out[i].Positions == g.Positions && out[i].Window == g.Window {
				out[i].Layers++
				return
			}
		}
		out = append(out, g)
	}
	for i := range m.Layers {
		lc := &m.Layers[i].Config
		if lc.Kind.Recurrent() {
			continue // a state, no cache
		}
		w := lc.Window
		if w >= ctx {
			w = 0 // the window covers the context: no saving, full attention in effect
		}
		if w == 0 {
			add(KVGroup{Layers: 1, Positions: ctx})
		}
	}
	for i := range m.Layers {
		lc := &m.Layers[i].Config
		if lc.Window > 0 && lc.Window < ctx && !lc.Kind.Recurrent() {
			add(KVGroup{Layers: 1, Positions: lc.KVPositions(ctx), Window: lc.Window})
		}
	}
	return out
}

// KVFormula says in one line how the KV cache of ctx positions adds up, e.g.
// "(1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads × 128 head dim ×
// 2 (K,V) × 2 B = 576.0 KiB".
func (m *Model) KVFormula(ctx, elemBytes int) string {
	var parts []string
	for _, g := range m.KVGroups(ctx) {
		what := fmt.Sprintf("%d ctx", g.Positions)
		if g.Window > 0 {
			what = fmt.Sprintf("%d window", g.Positions)
		}
		parts = append(parts, fmt.Sprintf("%d %s × %s", g.Layers, plural(g.Layers, "layer"), what))
	}
	pos := strings.Join(parts, " + ")
	if len(parts) > 1 {
		pos = "(" + pos + ")"
	}
	return fmt.Sprintf("%s × %d kv heads × %d head dim × 2 (K,V) × %d B = %d B",
		pos, m.KVHeads, m.HeadDim, elemBytes, m.KVBytes(ctx, elemBytes))
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
