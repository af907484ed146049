package arch

// Qwen2 is llama with biases on Q, K and V and NeoX-style rope.
func init() {
	register(Arch{
		Name: "qwen2", NeoX: true, QKVBias: Required, FusedQKV: true,
		Block: Block{PreNorm: true, Act: ActSiLU},
	})
}
