package arch

// Ministral 3 (llama.cpp models/mistral3.cpp): llama with a head size of
// its own (attention.key_length), YaRN whose beta and log-multiplier keys
// the file sets, and the attention temperature tuning of Q
// (attention.temperature_scale). The converter permutes Q and K for
// adjacent-pair RoPE as it does for llama.
func init() {
	register(Arch{
		Name: "mistral3", OutBias: Optional, KeyLength: true,
		YaRNKeys:       true,
		TemperatureKey: "attention.temperature_scale",
		Block:          Block{PreNorm: true, Act: ActSiLU},
	})
}
