package arch

// Gemma 3: Gemma 2's block with per-head Q/K norms, no attention soft-cap,
// and (when the file sets a window) five local layers of every six, which
// rotate with their own base (default 10000) and ignore rope scaling
// (llama.cpp models/gemma3.cpp).
func init() {
	register(Arch{
		Name: "gemma3", NeoX: true, FusedQKV: true, KeyLength: true,
		Block:          Block{PreNorm: true, PostNorm: true, QKNorm: QKNormHead, Act: ActGELUTanh},
		EmbedScaleSqrt: true, ScaleQ: true, AttnScaleEmbdLayers: 62,
		FinalSoftcap: Capped{Key: "final_logit_softcapping"},
		SWA: SlidingWindow{
			Key: "attention.sliding_window", Period: 6, PeriodKey: "attention.sliding_window_pattern",
			LocalBaseKey: "rope.freq_base_swa", LocalBaseDefault: 10000, LocalUnscaled: true,
		},
	})
}
