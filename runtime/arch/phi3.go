package arch

// Phi-3 and Phi-4-mini: fused attn_qkv (Q|K|V rows) and a fused ffn_up
// (gate rows, then up rows), NeoX rope that may rotate only part of each
// head, Q scaled before attention. Its sliding_window key is read and then
// ignored by llama.cpp (models/phi3.cpp), and so here.
func init() {
	register(Arch{
		Name: "phi3", NeoX: true, QKVBias: Optional, FusedQKV: true, FusedGateUp: true,
		Block:  Block{PreNorm: true, Act: ActSiLU},
		ScaleQ: true,
		SWA:    SlidingWindow{Key: "attention.sliding_window", Disabled: true},
	})
}
