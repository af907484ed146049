package arch

// Qwen3-MoE (Qwen3-30B-A3B, Qwen3-Coder-30B-A3B) is the qwen3 block with
// every FFN a mixture of SiLU-gated experts: softmax over all experts,
// top-k, weights renormalized; no shared expert (llama.cpp
// models/qwen3moe.cpp).
func init() {
	register(Arch{
		Name: "qwen3moe", NeoX: true, QKVBias: Optional, FusedQKV: true, KeyLength: true,
		Block:  Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU},
		Gating: GatingSoftmaxTopKNorm,
	})
}
