package engine

import (
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
)

// layerLayout is ModelInfo's KVLayout, KVShared and PLE: the backend's
// KV groups (its rings as it holds them: the Vulkan backend's keep a
// prefill chunk beyond the window) only where layers differ in width or
// share caches (elsewhere the uniform figures say it), and the per-layer
// embedding table.
func layerLayout(m *arch.Model, mem backend.Memory) (layout []KVGroup, shared int, ple PLEInfo) {
	shared = mem.KVShared
	varies := shared > 0
	for _, g := range mem.KVGroups {
		varies = varies || g.KVHeads != m.KVHeads || g.HeadDim != m.HeadDim
	}
	if varies {
		for _, g := range mem.KVGroups {
			layout = append(layout, KVGroup(g))
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
