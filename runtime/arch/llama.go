package arch

// Llama 2 and 3, Mistral, TinyLlama and SmolLM all load as "llama": the
// converter permutes Q and K so ggml's adjacent-pair rope applies.
func init() {
	register(Arch{
		Name: "llama", QKVBias: Optional, FusedQKV: true,
		Block: Block{PreNorm: true, Act: ActSiLU},
	})
}
