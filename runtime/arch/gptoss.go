package arch

// gpt-oss (20b, 120b; llama.cpp models/openai-moe.cpp): attention with
// biases on q, k, v and the output and a learned sink logit per head,
// sliding-window attention on even layers, YaRN RoPE; every FFN routes to
// experts by top-k on the biased router logits then a softmax over the k,
// experts with biases and a clamped SwiGLU. The FFN's pre-norm is named
// post_attention_norm.
func init() {
	register(Arch{
		Name: "gpt-oss", NeoX: true, QKVBias: Required, OutBias: Required, Sinks: true, KeyLength: true,
		Output:  OutputRequired,
		FFNNorm: "post_attention_norm",
		Block:   Block{PreNorm: true, Act: ActSwiGLUOAI},
		Gating:  GatingTopKSoftmax,
		SWA:     SlidingWindow{Key: "attention.sliding_window", Period: 2},
	})
}
