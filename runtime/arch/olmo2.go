package arch

// OLMo 2: no pre-norms; RMSNorm after each branch instead, and RMSNorm over
// the full Q and K projections before RoPE. Its output is never tied
// (llama.cpp models/olmo2.cpp). OLMo 3's optional window: 3 local layers of 4.
func init() {
	register(Arch{
		Name: "olmo2", NeoX: true, Output: OutputRequired,
		Block: Block{PostNorm: true, QKNorm: QKNormFull, Act: ActSiLU},
		SWA:   SlidingWindow{Key: "attention.sliding_window", Period: 4, LocalUnscaled: true},
	})
}
