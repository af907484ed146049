package engine

import "vkchat/runtime/arch"

// layerLayout is ModelInfo's KVLayout, KVShared and PLE: the KV groups
// only where layers differ in width or share caches (elsewhere the
// uniform figures say it), and the per-layer embedding table.
func layerLayout(m *arch.Model, ctx int) (layout []KVGroup, shared int, ple PLEInfo) {
	shared = m.KVShared()
	groups := m.KVGroups(ctx)
	varies := shared > 0
	for _, g := range groups {
		varies = varies || g.KVHeads != m.KVHeads || g.HeadDim != m.HeadDim
	}
	if varies {
		for _, g := range groups {
			layout = append(layout, KVGroup{Layers: g.Layers, Positions: g.Positions, Window: g.Window, KVHeads: g.KVHeads, HeadDim: g.HeadDim})
		}
	}
	if p := m.PLE; p != nil {
		ple = PLEInfo{Width: p.Width, Layers: len(m.Layers), Tokens: p.Token.Rows, Type: p.Token.Type.String(),
			RowBytes: int64(len(p.Token.Data) / p.Token.Rows)}
	}
	return layout, shared, ple
}
