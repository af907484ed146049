package arch

// Granite (3.x): llama with four multipliers: embeddings, each residual
// branch, the attention scale and the logits (÷), and RoPE that a
// not-finetuned file turns off (llama.cpp models/granite.cpp).
func init() {
	register(Arch{
		Name: "granite", QKVBias: Optional, FusedQKV: true,
		Block:            Block{PreNorm: true, Act: ActSiLU},
		RopeFinetunedKey: "rope.scaling.finetuned",
		EmbedScaleKey:    "embedding_scale", ResidualScaleKey: "residual_scale",
		AttnScaleKey: "attention.scale", LogitScaleKey: "logit_scale", LogitScaleNeeded: true,
	})
}
