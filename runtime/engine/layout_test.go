package engine

import "testing"

// Gemma 4's session describes its KV cache per group of layers, and the
// groups add up to what each backend allocated (the Vulkan backend's rings
// are larger than the window); the per-layer embedding table is the
// file's (6 layers × 32 F32 values for each of 512 tokens).
func TestGemma4LayoutMatchesAllocation(t *testing.T) {
	for _, name := range testBackends(t) {
		t.Run(name, func(t *testing.T) { checkGemma4Layout(t, name) })
	}
}

func checkGemma4Layout(t *testing.T, backendName string) {
	s := loadSession(t, "2026/synth-gemma4-F32.gguf", backendName)
	info, st := s.Info(), s.Stats()
	var values int64
	for _, g := range info.KVLayout {
		values += int64(g.Layers) * int64(g.Positions) * int64(g.KVHeads) * int64(g.HeadDim)
	}
	if len(info.KVLayout) != 2 || info.KVShared != 2 {
		t.Fatalf("layout %+v, %d shared; want a full and a sliding group, 2 shared", info.KVLayout, info.KVShared)
	}
	if got := values * 2 * 2; got != st.KVAllocated {
		t.Errorf("layout adds up to %d B, the backend allocated %d B", got, st.KVAllocated)
	}
	if p := info.PLE; p.Width != 32 || p.Layers != 6 || p.Tokens != 512 || p.Type != "F32" || p.Bytes() != 512*6*32*4 {
		t.Errorf("PLE %+v", p)
	}
}
