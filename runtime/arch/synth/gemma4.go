package synth

import (
	"fmt"
	"math"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// A synthetic gemma4 is laid out like Gemma 4 E2B/E4B at a smaller scale:
// every third layer attends to the whole context and the others slide
// (the real models: four sliding, then one full; the last is full in
// both); sliding layers have half the full head size and rotate all of
// it, full layers rotate a quarter of theirs through rope_freqs (the
// real partial_rotary_factor); the last third of the layers share the KV
// cache of the last earlier layer of their kind; and every layer adds a
// per-layer embedding of gemma4PLE values.

//
// With experts (Shape.Experts > 0) it is laid out like Gemma 4 26B-A4B
// instead: five sliding layers, then a full one (the real pattern); full
// layers have a quarter of the sliding layers' KV heads and no V
// projection (V is the normed K); no per-layer embeddings and no KV
// sharing; every layer runs its dense MLP beside the experts, whose gate
// and up are one fused bank, with the router's input scale, per-expert
// output scales and the three extra norms.

// gemma4MoE reports whether shape s gets the 26B-A4B layout.
func gemma4MoE(s Shape) bool { return s.Experts > 0 }

// gemma4Sliding reports whether layer l slides.
func gemma4Sliding(s Shape, l int) bool {
	if gemma4MoE(s) {
		return (l+1)%6 != 0
	}
	return (l+1)%3 != 0
}

// gemma4Shared is how many trailing layers read an earlier layer's cache:
// a third, once there are six layers (before that, the first shared layer
// would find no earlier full layer to read); none in the 26B-A4B layout.
func gemma4Shared(s Shape) int {
	if s.Layers < 6 || gemma4MoE(s) {
		return 0
	}
	return s.Layers / 3
}

// gemma4KVHeads is layer l's KV head count: the 26B-A4B's full layers
// have a quarter of the sliding layers' (2 against 8).
func gemma4KVHeads(s Shape, l int) int {
	if gemma4MoE(s) && !gemma4Sliding(s, l) {
		return max(1, s.KVHeads/4)
	}
	return s.KVHeads
}

// gemma4PLE is the per-layer embedding width: the real models' 256 is
// wider than the tiny shapes; 32 is one Q8_0/Q4_0 block.
const gemma4PLE = 32

// gemma4HeadDims are the full and sliding head sizes of shape s.
func gemma4HeadDims(s Shape) (full, sliding int) {
	full = s.HeadDim
	if full == 0 {
		full = s.Embd / s.Heads
	}
	return full, full / 2
}

func gemma4Keys(s Shape, window int) map[string]any {
	full, sliding := gemma4HeadDims(s)
	pattern := make([]bool, s.Layers)
	for l := range pattern {
		pattern[l] = gemma4Sliding(s, l)
	}
	ple := gemma4PLE
	if gemma4MoE(s) {
		ple = 0
	}
	keys := map[string]any{
		"attention.sliding_window":         uint32(window),
		"attention.sliding_window_pattern": pattern,
		"attention.key_length_swa":         uint32(sliding),
		"attention.value_length_swa":       uint32(sliding),
		"attention.shared_kv_layers":       uint32(gemma4Shared(s)),
		"rope.dimension_count":             uint32(full),
		"rope.dimension_count_swa":         uint32(sliding),
		"rope.freq_base":                   float32(1e6),
		"rope.freq_base_swa":               float32(10000),
		"embedding_length_per_layer_input": uint32(ple),
		"final_logit_softcapping":          float32(30),
	}
	if gemma4MoE(s) {
		kv := make([]int32, s.Layers)
		for l := range kv {
			kv[l] = int32(gemma4KVHeads(s, l))
		}
		keys["attention.head_count_kv"] = kv
	}
	return keys
}

// gemma4Check refuses shapes the recipe cannot lay out.
func gemma4Check(s Shape, t ggml.Type) error {
	full, sliding := gemma4HeadDims(s)
	switch {
	case sliding == 0 || sliding%2 != 0:
		return fmt.Errorf("synth: gemma4's sliding head size (half of %d) must be even and positive", full)
	case (s.Heads*sliding)%int(t.BlockElems()) != 0 || gemma4PLE%int(t.BlockElems()) != 0:
		return fmt.Errorf("synth: gemma4's sliding heads × head size %d and per-layer width %d must be multiples of the %s block size %d", s.Heads*sliding, gemma4PLE, t, t.BlockElems())
	case gemma4MoE(s) && s.Heads%max(1, s.KVHeads/4) != 0:
		return fmt.Errorf("synth: gemma4's full layers' %d KV heads (a quarter of %d) do not divide its %d heads", max(1, s.KVHeads/4), s.KVHeads, s.Heads)
	}
	return nil
}

// gemma4AttnSpecs are layer l's attention tensors (after attn_norm), in
// its own geometry. Shared layers carry K and V too, as the converter
// writes them; nothing reads them. The 26B-A4B's full layers have no V.
func gemma4AttnSpecs(p string, s Shape, l int) []spec {
	hd, slidingHD := gemma4HeadDims(s)
	sliding := gemma4Sliding(s, l)
	if sliding {
		hd = slidingHD
	}
	q, kv := s.Heads*hd, gemma4KVHeads(s, l)*hd
	specs := []spec{{p + "attn_q.weight", s.Embd, q, false, 0}, {p + "attn_k.weight", s.Embd, kv, false, 0}}
	if sliding || !gemma4MoE(s) {
		specs = append(specs, spec{p + "attn_v.weight", s.Embd, kv, false, 0})
	}
	return append(specs,
		spec{p + "attn_q_norm.weight", hd, 1, true, 0},
		spec{p + "attn_k_norm.weight", hd, 1, true, 0},
		spec{p + "attn_output.weight", q, s.Embd, false, 0})
}

// gemma4LayerSpecs are the per-layer embedding weights (none with
// experts) and the output scale that follow layer l's FFN.
func gemma4LayerSpecs(p string, s Shape, experts bool) []spec {
	scale := spec{p + "layer_output_scale.weight", 1, 1, true, 0}
	if experts {
		return []spec{scale}
	}
	return []spec{
		{p + "inp_gate.weight", s.Embd, gemma4PLE, false, 0},
		{p + "proj.weight", gemma4PLE, s.Embd, false, 0},
		{p + "post_norm.weight", s.Embd, 1, true, 0},
		scale,
	}
}

// gemma4ExpertSpecs are what a 26B-A4B layer adds beside its dense MLP
// (written after it): the dense branch's post-norm, the router with its
// input scale, the experts' pre-norm, the fused gate|up bank (each
// expert's gate rows, then its up rows), the down bank with its
// per-expert output scales, and the experts' post-norm. The scales are
// ones, as the norms are: the bench reads the same bytes either way.
func gemma4ExpertSpecs(p string, s Shape) []spec {
	vec := func(name string, n int) spec { return spec{p + name, n, 1, true, 0} }
	return []spec{
		vec("post_ffw_norm_1.weight", s.Embd),
		{p + "ffn_gate_inp.weight", s.Embd, s.Experts, false, 0},
		vec("ffn_gate_inp.scale", s.Embd),
		vec("pre_ffw_norm_2.weight", s.Embd),
		{p + "ffn_gate_up_exps.weight", s.Embd, 2 * s.ExpertFF, false, s.Experts},
		{p + "ffn_down_exps.weight", s.ExpertFF, s.Embd, false, s.Experts},
		vec("ffn_down_exps.scale", s.Experts),
		vec("post_ffw_norm_2.weight", s.Embd),
	}
}

// gemma4ModelSpecs are the per-layer embedding tables.
func gemma4ModelSpecs(s Shape, vocab int) []spec {
	return []spec{
		{"per_layer_token_embd.weight", gemma4PLE * s.Layers, vocab, false, 0},
		{"per_layer_model_proj.weight", s.Embd, gemma4PLE * s.Layers, false, 0},
		{"per_layer_proj_norm.weight", gemma4PLE, 1, true, 0},
	}
}

// addRopeFreqs writes the full layers' proportional RoPE: factor 1 for
// the first quarter of the pairs, 1e30 (no rotation) for the rest.
func addRopeFreqs(w *gguf.Writer, s Shape) error {
	full, _ := gemma4HeadDims(s)
	data := make([]float32, full/2)
	for i := range data {
		data[i] = 1
		if i >= max(1, full/8) {
			data[i] = float32(1e30)
		}
	}
	enc, err := quant.Quantize(ggml.F32, data)
	if err != nil {
		return fmt.Errorf("synth: rope_freqs.weight: %w", err)
	}
	return w.AddTensor("rope_freqs.weight", ggml.F32, []uint64{uint64(len(data))}, enc)
}

// gemma4OutScale is the layer_output_scale every layer gets: below 1, as
// the real models' are, so the scale is not a no-op.
var gemma4OutScale = float32(math.Sqrt(0.5))
