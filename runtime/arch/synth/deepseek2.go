package synth

import (
	"fmt"

	"vkchat/runtime/ggml"
)

// mlaDims is a synthetic deepseek2's latent attention, scaled from the
// shape's head size as GLM-4.7-Flash's is from its own (nope 192, rope
// 64, value 256, kv_lora 512, q_lora 768 at head size 256): each width
// whose rows a product reads is a whole number of 32-value blocks.
type mlaDims struct{ qLora, kvLora, nope, rope, v int }

func deepseek2Dims(s Shape) mlaDims {
	hd := max(32, (s.Embd/s.Heads+31)/32*32)
	return mlaDims{qLora: max(32, s.Embd/2/32*32), kvLora: 4 * hd, nope: hd, rope: hd / 2, v: hd}
}

// deepseek2Lead is the layers before the experts take over (GLM-4.7-Flash
// and DeepSeek-V2-Lite have one).
const deepseek2Lead = 1

// deepseek2Keys are GLM-4.7-Flash's choices: sigmoid routing with
// exp_probs_b, renormalised, × 1.8, one shared expert, no groups, no
// YaRN, base 1e6.
func deepseek2Keys(s Shape, _ int) map[string]any {
	d := deepseek2Dims(s)
	return map[string]any{
		"rope.freq_base":                   float32(1e6),
		"rope.dimension_count":             uint32(d.rope),
		"attention.head_count_kv":          uint32(1),
		"attention.q_lora_rank":            uint32(d.qLora),
		"attention.kv_lora_rank":           uint32(d.kvLora),
		"attention.key_length":             uint32(d.kvLora + d.rope),
		"attention.value_length":           uint32(d.kvLora),
		"attention.key_length_mla":         uint32(d.nope + d.rope),
		"attention.value_length_mla":       uint32(d.v),
		"leading_dense_block_count":        uint32(deepseek2Lead),
		"expert_shared_count":              uint32(1),
		"expert_weights_scale":             float32(1.8),
		"expert_weights_norm":              true,
		"expert_gating_func":               uint32(2),
		"expert_group_count":               uint32(1),
		"expert_group_used_count":          uint32(1),
		"rope.scaling.yarn_log_multiplier": float32(0),
	}
}

// deepseek2Check refuses weight types whose blocks do not divide the
// latent attention's per-head widths (llama.cpp's quantizer falls back to
// Q5_0/Q8_0 for those rows; the synth writes one type).
func deepseek2Check(s Shape, t ggml.Type) error {
	d := deepseek2Dims(s)
	if b := int(t.BlockElems()); d.nope%b != 0 || d.kvLora%b != 0 || d.qLora%b != 0 {
		return fmt.Errorf("synth: deepseek2's per-head widths (nope %d, kv_lora %d, q_lora %d) are not whole %s blocks of %d: use F32, F16 or a 32-value type (q8_0, q4_0)", d.nope, d.kvLora, d.qLora, t, b)
	}
	return nil
}

// deepseek2AttnSpecs are a latent-attention layer's tensors (after
// attn_norm): the query's low-rank pair, the compressed KV projection and
// its norm, the per-head absorption and decompression banks, the output.
func deepseek2AttnSpecs(p string, s Shape) []spec {
	d := deepseek2Dims(s)
	return []spec{
		{p + "attn_q_a.weight", s.Embd, d.qLora, false, 0},
		{p + "attn_q_a_norm.weight", d.qLora, 1, true, 0},
		{p + "attn_q_b.weight", d.qLora, s.Heads * (d.nope + d.rope), false, 0},
		{p + "attn_kv_a_mqa.weight", s.Embd, d.kvLora + d.rope, false, 0},
		{p + "attn_kv_a_norm.weight", d.kvLora, 1, true, 0},
		{p + "attn_k_b.weight", d.nope, d.kvLora, false, s.Heads},
		{p + "attn_v_b.weight", d.kvLora, d.v, false, s.Heads},
		{p + "attn_output.weight", s.Heads * d.v, s.Embd, false, 0},
	}
}
