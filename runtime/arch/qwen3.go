package arch

// Qwen3 drops Qwen2's biases for per-head RMSNorm on Q and K, and its
// head_dim (key_length) need not be embd/heads (llama.cpp models/qwen3.cpp).
func init() {
	register(Arch{
		Name: "qwen3", NeoX: true, QKVBias: Optional, FusedQKV: true, KeyLength: true,
		Block: Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU},
	})
}
