package arch

// Gemma 2: pre- and post-norms around both branches, GELU-gated FFN,
// embeddings × √embd, Q scaled before attention, attention and final-logit
// soft-caps, and a sliding window on every other layer (even layers local)
// (llama.cpp models/gemma2.cpp). The output is always the token embedding.
func init() {
	register(Arch{
		Name: "gemma2", NeoX: true, FusedQKV: true, KeyLength: true, Output: OutputTiedOnly,
		Block:          Block{PreNorm: true, PostNorm: true, Act: ActGELUTanh},
		EmbedScaleSqrt: true, ScaleQ: true, AttnScaleEmbdLayers: 46,
		AttnSoftcap:  Capped{Key: "attn_logit_softcapping", Default: 50},
		FinalSoftcap: Capped{Key: "final_logit_softcapping", Default: 30},
		SWA: SlidingWindow{
			Key: "attention.sliding_window", DefaultWindow: 4096,
			Period: 2, PeriodKey: "attention.sliding_window_pattern",
			LocalBaseKey: "rope.freq_base_swa",
		},
	})
}
