package arch

// SmolLM3: llama with no RoPE on every fourth layer (llama.cpp hard-codes
// the step; models/smollm3.cpp).
func init() {
	register(Arch{
		Name: "smollm3", QKVBias: Optional, FusedQKV: true, NoRopeEvery: 4,
		Block: Block{PreNorm: true, Act: ActSiLU},
	})
}
