package engine

import (
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
)

// layerLayout is ModelInfo's KVLayout, KVShared and PLE: the KV groups
// only where layers differ in width or share caches (elsewhere the
// uniform figures say it), each sliding group holding the ring the
// backend made for it (the Vulkan backend's rings keep a prefill chunk
// beyond the window), and the per-layer embedding table.
func layerLayout(m *arch.Model, ctx int, mem backend.Memory, kv backend.KVType) (layout []KVGroup, shared int, ple PLEInfo) {
	shared = m.KVShared()
	groups := m.KVGroups(ctx)
	varies := shared > 0
	for _, g := range groups {
		varies = varies || g.KVHeads != m.KVHeads || g.HeadDim != m.HeadDim
	}
	if varies {
		for _, g := range groups {
			kg := KVGroup{Layers: g.Layers, Positions: g.Positions, Window: g.Window, KVHeads: g.KVHeads, HeadDim: g.HeadDim}
			perPos := int64(g.Layers) * 2 * int64(g.KVHeads) * int64(g.HeadDim) * int64(kv.Bytes())
			for _, r := range mem.KVRings {
				if g.Window > 0 && r.Layers == g.Layers && r.BytesPerPosition == perPos {
					kg.Positions = r.Window
				}
			}
			layout = append(layout, kg)
		}
	}
	if p := m.PLE; p != nil {
		ple = PLEInfo{Width: p.Width, Layers: len(m.Layers), Tokens: p.Token.Rows, Type: p.Token.Type.String(),
			RowBytes: int64(len(p.Token.Data) / p.Token.Rows)}
	}
	return layout, shared, ple
}

// kvSharing is ModelInfo's KVSharing: which layers read which layer's
// cache (the same on every backend, so it is worked out once at load).
func kvSharing(m *arch.Model) []KVShare {
	var out []KVShare
	for i := range m.Layers {
		if lc := m.Layers[i].Config; lc.SharesKV(i) {
			out = append(out, KVShare{Layer: i, Source: lc.KVLayer})
		}
	}
	return out
}
