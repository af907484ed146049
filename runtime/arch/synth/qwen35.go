package synth

import (
	"fmt"
	"math/rand/v2"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// qwen35Interval is the synthetic hybrids' full_attention_interval, the
// real models' 4: three Gated DeltaNet layers, then one of attention.
const qwen35Interval = 4

// deltaNetDims are the DeltaNet shape a synthetic qwen35 of shape s gets:
// state 128 as in the real models (less for tiny shapes), key and value
// heads filling embd (Qwen3.5 0.8B: embd 1024, 16 × 128 value heads; here
// as many key heads as value heads).
func deltaNetDims(s Shape) (state, heads int) {
	state = min(128, s.Embd/4)
	return state, s.Embd / state
}

func qwen35Keys(s Shape, _ int) map[string]any {
	hd := s.HeadDim
	if hd == 0 {
		hd = s.Embd / s.Heads
	}
	S, h := deltaNetDims(s)
	return map[string]any{
		"rope.freq_base": float32(1e7), "rope.dimension_count": uint32(hd / 4),
		// Qwen3.5's sections: every rotated pair takes the text position
		"rope.dimension_sections": []int32{11, 11, 10, 0},
		"ssm.conv_kernel":         uint32(4), "ssm.state_size": uint32(S),
		"ssm.group_count": uint32(h), "ssm.time_step_rank": uint32(h), "ssm.inner_size": uint32(h * S),
		"full_attention_interval": uint32(qwen35Interval),
	}
}

// deltaNetSpecs are a DeltaNet layer's tensors (after attn_norm).
func deltaNetSpecs(p string, s Shape) []spec {
	S, h := deltaNetDims(s)
	channels := 3 * h * S
	return []spec{
		{p + "attn_qkv.weight", s.Embd, channels, false, 0},
		{p + "attn_gate.weight", s.Embd, h * S, false, 0},
		{p + "ssm_conv1d.weight", 4, channels, false, 0},
		{p + "ssm_dt.bias", h, 1, false, 0},
		{p + "ssm_a", h, 1, false, 0},
		{p + "ssm_beta.weight", s.Embd, h, false, 0},
		{p + "ssm_alpha.weight", s.Embd, h, false, 0},
		{p + "ssm_norm.weight", S, 1, true, 0},
		{p + "ssm_out.weight", h * S, s.Embd, false, 0},
	}
}

// addDecay writes ssm_a, −exp(A_log): negative, so the state decays.
func addDecay(w *gguf.Writer, rng *rand.Rand, name string, n int) error {
	data := make([]float32, n)
	for i := range data {
		data[i] = -float32(0.5 + rng.Float64())
	}
	enc, err := quant.Quantize(ggml.F32, data)
	if err != nil {
		return fmt.Errorf("synth: %s: %w", name, err)
	}
	return w.AddTensor(name, ggml.F32, []uint64{uint64(n)}, enc)
}
