// Package synth writes GGUF models of any supported architecture with
// seeded random weights, for benchmarks and tests that need a model of a
// given shape (and, with a real vocabulary and its chat template, for
// trying a chat end to end).
package synth

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// Shape is the model's dimensions.
type Shape struct {
	Embd, FF, Heads, KVHeads, Layers int
	Context                          int
	// HeadDim sets attention.key_length apart from Embd/Heads, for the
	// architectures that read it (qwen3, gemma2/3); 0 = Embd/Heads.
	HeadDim int
	// Experts, ExpertsUsed and ExpertFF shape the FFN of the
	// mixture-of-experts architectures (qwen3moe); 0 = 8 experts, 2 used,
	// FF/4 each. Dense architectures ignore them. gemma4, whose experts
	// are optional, writes its 26B-A4B layout when Experts > 0 (gemma4.go)
	// and its dense E2B/E4B layout otherwise.
	Experts, ExpertsUsed, ExpertFF int
	// SharedFF is a shared expert's width, for the architectures with one;
	// 0 = ExpertFF.
	SharedFF int
	// Pattern lays out a Mamba2 hybrid's layers, a letter each as
	// llama.cpp's hybrid_override_pattern writes them: M a Mamba2 mixer,
	// * attention, E an FFN (routed where the architecture routes); "" =
	// the recipe's own rule (mamba2.go). Other architectures refuse one.
	Pattern string
	// Arch is the architecture a preset is laid out for; "" = any.
	Arch string
}

// Shapes are named presets: llama2.c's 110M, TinyLlama's 1.1B and
// Llama 3's 8B (its geometry; the vocabulary is whatever Options.Vocab
// holds, so with llama's 32,000 tokens the file is 7.2B parameters, 4.1
// GB in Q4_0).
var Shapes = map[string]Shape{
	"110m": {Embd: 768, FF: 2048, Heads: 12, KVHeads: 12, Layers: 12, Context: 1024},
	"1b":   {Embd: 2048, FF: 5632, Heads: 32, KVHeads: 4, Layers: 22, Context: 2048},
	"8b":   {Embd: 4096, FF: 14336, Heads: 32, KVHeads: 8, Layers: 32, Context: 8192},
	"tiny": {Embd: 64, FF: 128, Heads: 4, KVHeads: 2, Layers: 2, Context: 256},
	// moe is the MoE bench shape: ~0.9B parameters of which ~0.2B are
	// read per token (32 experts, 4 used).
	"moe": {Embd: 1024, FF: 2048, Heads: 16, KVHeads: 4, Layers: 16, Context: 2048, Experts: 32, ExpertsUsed: 4, ExpertFF: 512},
	// The bench shapes of the 2026b MoE families, each its real model's
	// layout at the moe shape's width and about its file size (so a
	// 2-core machine decodes them), with the real expert count and top-k.
	// gemma4moe is Gemma 4 26B-A4B: five sliding layers then a full one
	// with a quarter of the KV heads and no V projection, head sizes and
	// query widths in the real ratios to the width, a dense MLP of 3/4
	// the width beside 128 experts (top 8) of a quarter of it.
	"gemma4moe": {Arch: "gemma4", Embd: 1024, FF: 768, Heads: 16, KVHeads: 8, HeadDim: 192, Layers: 6, Context: 4096,
		Experts: 128, ExpertsUsed: 8, ExpertFF: 256},
	// nemotron_h_moe is Nemotron 3 Nano 30B-A3B: Mamba2 and MoE layers
	// alternating with an attention layer every sixth or seventh (its
	// hybrid_override_pattern's first 13 letters), 128 ungated ReLU²
	// experts (top 6) and the shared expert twice as wide (the real
	// model's 3712 beside 1856), sigmoid routing.
	"nemotron_h_moe": {Arch: "nemotron_h_moe", Embd: 1024, FF: 384, Heads: 8, KVHeads: 2, Layers: 13, Context: 4096,
		Experts: 128, ExpertsUsed: 6, ExpertFF: 384, SharedFF: 768, Pattern: "MEMEM*EMEMEM*"},
	// deepseek2 is GLM-4.7-Flash: latent attention (deepseek2.go), one
	// dense lead layer, then 64 experts (top 4) and a shared expert,
	// sigmoid routing with a selection bias and no group limit.
	"deepseek2": {Arch: "deepseek2", Embd: 1024, FF: 2816, Heads: 16, KVHeads: 1, Layers: 8, Context: 4096,
		Experts: 64, ExpertsUsed: 4, ExpertFF: 384},
}

// Options choose the architecture, the weight type, the vocabulary source
// and the seed.
type Options struct {
	Arch  string    // a supported architecture (arch.Supported); "" = llama
	Type  ggml.Type // type of the matrices; norms stay F32
	Vocab *gguf.File
	Seed  uint64
	// Window is the sliding window of the architectures that have one
	// (gemma2, gemma3); 0 = a quarter of the context.
	Window int
}

// Write generates the model and writes it to path.
func Write(path string, s Shape, o Options) error {
	w, err := Build(s, o)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// extras are the keys and layout choices of each architecture beyond what
// its declaration implies, with values of the real models where they have
// one (Gemma 2's caps, Granite 3's multipliers).
type extras struct {
	keys     func(s Shape, window int) map[string]any // without the arch prefix
	fusedQKV bool                                     // write attn_qkv as the converter does (phi3)
	tied     bool                                     // no output.weight where the declaration allows either
	// expertBias writes the per-expert biases gpt-oss has.
	expertBias bool
	// check refuses shapes the recipe cannot lay out (nil: none).
	check func(s Shape, t ggml.Type) error
}

var archExtras = map[string]extras{
	"llama": {},
	"qwen2": {},
	"qwen3": {keys: func(Shape, int) map[string]any { return map[string]any{"rope.freq_base": float32(1e6)} }},
	"gemma2": {tied: true, keys: func(_ Shape, w int) map[string]any {
		return map[string]any{"attention.sliding_window": uint32(w), "attn_logit_softcapping": float32(50), "final_logit_softcapping": float32(30)}
	}},
	"gemma3": {tied: true, keys: func(_ Shape, w int) map[string]any {
		return map[string]any{"attention.sliding_window": uint32(w), "rope.freq_base": float32(1e6), "rope.freq_base_swa": float32(10000)}
	}},
	"phi3": {fusedQKV: true, keys: func(s Shape, _ int) map[string]any {
		return map[string]any{"rope.scaling.original_context_length": uint32(s.Context)}
	}},
	"smollm3": {tied: true, keys: func(Shape, int) map[string]any { return map[string]any{"rope.freq_base": float32(2e6)} }},
	"olmo2":   {keys: func(Shape, int) map[string]any { return map[string]any{"rope.freq_base": float32(500000)} }},
	"gpt-oss": {expertBias: true, keys: func(s Shape, w int) map[string]any {
		return map[string]any{"attention.sliding_window": uint32(w), "rope.freq_base": float32(150000),
			"rope.scaling.type": "yarn", "rope.scaling.factor": float32(4), "rope.scaling.original_context_length": uint32(max(1, s.Context/4))}
	}},
	"qwen3moe": {keys: func(Shape, int) map[string]any { return map[string]any{"rope.freq_base": float32(1e6)} }},
	"granite": {keys: func(s Shape, _ int) map[string]any {
		return map[string]any{"embedding_scale": float32(12), "residual_scale": float32(0.22),
			"attention.scale": float32(1) / float32(s.Embd/s.Heads), "logit_scale": float32(8)}
	}},
	"qwen35":    {keys: qwen35Keys},
	"qwen35moe": {keys: qwen35Keys},
	"lfm2":      {keys: lfm2Keys},
	"gemma4":    {tied: true, keys: gemma4Keys, check: gemma4Check},
	// Ministral 3's YaRN (factor 16, betas 32/1, mscale_all_dim 1) and
	// temperature β 0.1, over an original context of a sixteenth of the
	// shape's, so that both step within a short test.
	"deepseek2": {keys: deepseek2Keys, check: deepseek2Check},
	// Mamba2 hybrids (mamba2.go): Nemotron-H, Nemotron 3 Nano, Granite 4.0-H
	"nemotron_h":     {keys: mamba2Keys("nemotron_h"), check: mamba2Check("nemotron_h")},
	"nemotron_h_moe": {keys: mamba2Keys("nemotron_h_moe"), check: mamba2Check("nemotron_h_moe")},
	"granitehybrid":  {keys: mamba2Keys("granitehybrid"), check: mamba2Check("granitehybrid")},
	"mistral3": {keys: func(s Shape, _ int) map[string]any {
		return map[string]any{"rope.freq_base": float32(1e6), "rope.scaling.type": "yarn", "rope.scaling.factor": float32(16),
			"rope.scaling.original_context_length": uint32(max(1, s.Context/16)),
			"rope.scaling.yarn_beta_fast":          float32(32), "rope.scaling.yarn_beta_slow": float32(1),
			"rope.scaling.yarn_log_multiplier": float32(1), "attention.temperature_scale": float32(0.1)}
	}},
}

// Build returns a writer holding the model. The tensors follow the
// architecture's declaration (norm placement, Q/K norms, fused tensors,
// output rule), so what Load accepts is what is written.
func Build(s Shape, o Options) (*gguf.Writer, error) {
	if o.Arch == "" {
		o.Arch = "llama"
	}
	a, ok := arch.Lookup(o.Arch)
	if !ok {
		return nil, fmt.Errorf("synth: architecture %q is not supported (supported: %s)", o.Arch, strings.Join(arch.Supported(), ", "))
	}
	ex, ok := archExtras[o.Arch]
	if !ok {
		return nil, fmt.Errorf("synth: no synthetic recipe for architecture %q", o.Arch)
	}
	hd := s.HeadDim
	if s.Heads > 0 && hd == 0 && s.Embd%s.Heads == 0 {
		hd = s.Embd / s.Heads
	}
	switch {
	case s.Embd <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.Heads%s.KVHeads != 0 || s.FF <= 0 || s.Layers <= 0 || s.Context <= 0:
		return nil, fmt.Errorf("synth: inconsistent shape %+v", s)
	case hd <= 0 || hd%2 != 0:
		return nil, fmt.Errorf("synth: head dim %d (embd %d / heads %d) must be even and positive", hd, s.Embd, s.Heads)
	case s.Heads*hd != s.Embd && !a.KeyLength:
		return nil, fmt.Errorf("synth: %s needs heads × head dim = embd (%d × %d ≠ %d)", o.Arch, s.Heads, hd, s.Embd)
	}
	switch {
	case s.Arch != "" && s.Arch != o.Arch:
		return nil, fmt.Errorf("synth: the shape is laid out for %s, not %s", s.Arch, o.Arch)
	case s.Pattern != "" && !a.Mamba2:
		return nil, fmt.Errorf("synth: a layer pattern (%q) lays out a Mamba2 hybrid's layers; %s has none", s.Pattern, o.Arch)
	}
	if ex.check != nil {
		if err := ex.check(s, o.Type); err != nil {
			return nil, err
		}
	}
	if o.Vocab == nil {
		return nil, fmt.Errorf("synth: a vocabulary file is required")
	}
	tokens, ok, err := o.Vocab.Strings("tokenizer.ggml.tokens")
	if err != nil || !ok {
		return nil, fmt.Errorf("synth: %s has no tokenizer.ggml.tokens: %v", o.Vocab.Path, err)
	}
	vocab := len(tokens)
	q, kv := s.Heads*hd, s.KVHeads*hd
	qRows := q
	if a.Block.AttnGate {
		qRows = 2 * q // [q | gate] per head
	}
	for _, n := range []int{s.Embd, s.FF, q} {
		if n%int(o.Type.BlockElems()) != 0 {
			return nil, fmt.Errorf("synth: embd %d, ff %d and heads × head dim %d must be multiples of the %s block size %d", s.Embd, s.FF, q, o.Type, o.Type.BlockElems())
		}
	}
	// gemma4's experts are optional: its dense form unless the shape has
	// experts
	moe := a.Gating != arch.GatingNone && (!a.ExpertsBesideDense || s.Experts > 0)
	if moe {
		if s.Experts == 0 {
			s.Experts, s.ExpertsUsed = 8, 2
		}
		if s.ExpertFF == 0 {
			s.ExpertFF = s.FF / 4
		}
		if a.ExpertFFIsFF {
			s.ExpertFF = s.FF // granitehybrid's experts are feed_forward_length wide
		}
		if s.SharedFF == 0 {
			s.SharedFF = s.ExpertFF
		}
		switch {
		case s.ExpertsUsed <= 0 || s.ExpertsUsed > s.Experts:
			return nil, fmt.Errorf("synth: %d experts used of %d", s.ExpertsUsed, s.Experts)
		case s.ExpertFF%int(o.Type.BlockElems()) != 0:
			return nil, fmt.Errorf("synth: expert ff %d must be a multiple of the %s block size %d", s.ExpertFF, o.Type, o.Type.BlockElems())
		case s.SharedFF%int(o.Type.BlockElems()) != 0:
			return nil, fmt.Errorf("synth: shared expert ff %d must be a multiple of the %s block size %d", s.SharedFF, o.Type, o.Type.BlockElems())
		}
	}
	window := o.Window
	if window <= 0 {
		window = max(1, s.Context/4)
	}
	w := gguf.NewWriter()
	set := func(k string, v any) { w.Set(o.Arch+"."+k, v) }
	w.Set("general.architecture", o.Arch)
	w.Set("general.name", fmt.Sprintf("synthetic-%s-%s", o.Arch, strings.ToLower(o.Type.String())))
	set("context_length", uint32(s.Context))
	set("embedding_length", uint32(s.Embd))
	set("feed_forward_length", uint32(s.FF))
	set("block_count", uint32(s.Layers))
	set("attention.head_count", uint32(s.Heads))
	set("attention.head_count_kv", uint32(s.KVHeads)) // ex.keys may make it per layer
	if a.KeyLength {
		set("attention.key_length", uint32(hd))
		set("attention.value_length", uint32(hd))
	} else {
		set("rope.dimension_count", uint32(hd))
	}
	set("rope.freq_base", float32(10000))
	set("attention.layer_norm_rms_epsilon", float32(1e-5))
	if moe {
		set("expert_count", uint32(s.Experts))
		set("expert_used_count", uint32(s.ExpertsUsed))
		if !a.ExpertFFIsFF {
			set("expert_feed_forward_length", uint32(s.ExpertFF))
		}
		if a.SharedExpert {
			set("expert_shared_feed_forward_length", uint32(s.SharedFF))
		}
	}
	if ex.keys != nil {
		keys := ex.keys(s, window)
		for _, k := range slices.Sorted(maps.Keys(keys)) { // a seed writes the same bytes
			set(k, keys[k])
		}
	}
	for _, kv := range o.Vocab.KVs {
		// The whole tokenizer, chat template included.
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	add := func(name string, cols, rows, experts int, norm bool) error {
		typ := o.Type
		if norm || strings.HasSuffix(name, "ffn_gate_inp.weight") || strings.HasSuffix(name, "ssm_conv1d.weight") || strings.HasSuffix(name, "shortconv.conv.weight") {
			typ = ggml.F32 // the router and the conv stay F32, as llama.cpp's quantizer keeps them
		}
		data := make([]float32, cols*rows*max(experts, 1))
		if norm {
			for i := range data {
				data[i] = 1
			}
		} else {
			// Scaled so activations keep unit size through the layers.
			std := 1 / math.Sqrt(float64(cols))
			for i := range data {
				data[i] = float32(rng.NormFloat64() * std)
			}
		}
		enc, err := quant.Quantize(typ, data)
		if err != nil {
			return fmt.Errorf("synth: %s: %w", name, err)
		}
		dims := []uint64{uint64(cols), uint64(rows)}
		if norm {
			dims = dims[:1]
		}
		if experts > 0 {
			dims = append(dims, uint64(experts))
		}
		return w.AddTensor(name, typ, dims, enc)
	}
	outNorm := "output_norm.weight"
	if a.OutputNorm != "" {
		outNorm = a.OutputNorm
	}
	specs := []spec{{"token_embd.weight", s.Embd, vocab, false, 0}, {outNorm, s.Embd, 1, true, 0}}
	if a.Output == arch.OutputRequired || (a.Output == arch.OutputOrTied && !ex.tied) {
		specs = append(specs, spec{"output.weight", s.Embd, vocab, false, 0})
	}
	if a.PerLayer != nil && !moe {
		specs = append(specs, gemma4ModelSpecs(s, vocab)...) // gemma4.go; the 26B-A4B has no per-layer embeddings
	}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		vec := func(name string, n int) spec { return spec{p + name, n, 1, true, 0} }
		mat := func(name string, cols, rows int) spec { return spec{p + name, cols, rows, false, 0} }
		if a.Mamba2 {
			specs = append(specs, mamba2LayerSpecs(a, p, s, l, q, kv, moe)...) // mamba2.go
			continue
		}
		if a.Block.PreNorm {
			specs = append(specs, vec("attn_norm.weight", s.Embd))
		}
		switch {
		case a.DeltaNet && (l+1)%qwen35Interval != 0:
			specs = append(specs, deltaNetSpecs(p, s)...) // a Gated DeltaNet layer (qwen35.go)
		case a.ShortConv && lfm2Conv(l):
			specs = append(specs, shortConvSpecs(p, s)...) // lfm2.go
		case a.PerLayer != nil:
			specs = append(specs, gemma4AttnSpecs(p, s, l)...) // gemma4.go
		case a.MLA:
			specs = append(specs, deepseek2AttnSpecs(p, s)...) // deepseek2.go
		default:
			if ex.fusedQKV {
				specs = append(specs, mat("attn_qkv.weight", s.Embd, q+2*kv))
			} else {
				specs = append(specs, mat("attn_q.weight", s.Embd, qRows), mat("attn_k.weight", s.Embd, kv), mat("attn_v.weight", s.Embd, kv))
			}
			if a.QKVBias == arch.Required {
				// Biases are vectors but not norms: small random values.
				specs = append(specs, spec{p + "attn_q.bias", q, 1, false, 0}, spec{p + "attn_k.bias", kv, 1, false, 0}, spec{p + "attn_v.bias", kv, 1, false, 0})
			}
			switch a.Block.QKNorm {
			case arch.QKNormHead:
				specs = append(specs, vec("attn_q_norm.weight", hd), vec("attn_k_norm.weight", hd))
			case arch.QKNormFull:
				specs = append(specs, vec("attn_q_norm.weight", q), vec("attn_k_norm.weight", kv))
			}
			specs = append(specs, mat("attn_output.weight", q, s.Embd))
			if a.OutBias == arch.Required {
				specs = append(specs, spec{p + "attn_output.bias", s.Embd, 1, false, 0})
			}
			if a.Sinks {
				specs = append(specs, spec{p + "attn_sinks.weight", s.Heads, 1, false, 0})
			}
		}
		if a.Block.PostNorm {
			specs = append(specs, vec("post_attention_norm.weight", s.Embd))
		}
		if a.Block.PreNorm {
			name := "ffn_norm"
			if a.FFNNorm != "" {
				name = a.FFNNorm
			}
			specs = append(specs, vec(name+".weight", s.Embd))
		}
		bank := func(name string, cols, rows int) spec { return spec{p + name, cols, rows, false, s.Experts} }
		switch {
		case moe && a.ExpertsBesideDense:
			specs = append(specs, mat("ffn_gate.weight", s.Embd, s.FF), mat("ffn_up.weight", s.Embd, s.FF), mat("ffn_down.weight", s.FF, s.Embd))
			specs = append(specs, gemma4ExpertSpecs(p, s)...) // gemma4.go
		case moe && !(a.MLA && l < deepseek2Lead):
			specs = append(specs, mat("ffn_gate_inp.weight", s.Embd, s.Experts),
				bank("ffn_gate_exps.weight", s.Embd, s.ExpertFF), bank("ffn_up_exps.weight", s.Embd, s.ExpertFF),
				bank("ffn_down_exps.weight", s.ExpertFF, s.Embd))
			if a.SharedExpert && !a.SharedUngated {
				specs = append(specs, spec{p + "ffn_gate_inp_shexp.weight", s.Embd, 1, false, 0})
			}
			if a.SharedExpert {
				specs = append(specs, mat("ffn_gate_shexp.weight", s.Embd, s.SharedFF), mat("ffn_up_shexp.weight", s.Embd, s.SharedFF),
					mat("ffn_down_shexp.weight", s.SharedFF, s.Embd))
			}
			if a.RoutingKeys {
				specs = append(specs, spec{p + "exp_probs_b.bias", s.Experts, 1, false, 0})
			}
			if ex.expertBias {
				specs = append(specs, spec{p + "ffn_gate_inp.bias", s.Experts, 1, false, 0},
					spec{p + "ffn_gate_exps.bias", s.ExpertFF, s.Experts, false, 0},
					spec{p + "ffn_up_exps.bias", s.ExpertFF, s.Experts, false, 0},
					spec{p + "ffn_down_exps.bias", s.Embd, s.Experts, false, 0})
			}
		case a.FusedGateUp:
			specs = append(specs, mat("ffn_up.weight", s.Embd, 2*s.FF), mat("ffn_down.weight", s.FF, s.Embd))
		default:
			specs = append(specs, mat("ffn_gate.weight", s.Embd, s.FF), mat("ffn_up.weight", s.Embd, s.FF), mat("ffn_down.weight", s.FF, s.Embd))
		}
		if a.Block.PostNorm {
			specs = append(specs, vec("post_ffw_norm.weight", s.Embd))
		}
		if a.PerLayer != nil {
			specs = append(specs, gemma4LayerSpecs(p, s, moe)...)
		}
	}
	for _, sp := range specs {
		if a.Mamba2 {
			if ok, err := addMamba2Vector(w, rng, sp); err != nil {
				return nil, err
			} else if ok {
				continue
			}
		}
		// biases and sinks: small random values, F32
		if strings.HasSuffix(sp.name, ".bias") || strings.HasSuffix(sp.name, "attn_sinks.weight") || strings.HasSuffix(sp.name, "ffn_gate_inp_shexp.weight") {
			if err := addBias(w, rng, sp.name, sp.cols, sp.rows); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasSuffix(sp.name, "layer_output_scale.weight") {
			if err := addConst(w, sp.name, gemma4OutScale); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasSuffix(sp.name, ".ssm_a") {
			if err := addDecay(w, rng, sp.name, sp.cols); err != nil {
				return nil, err
			}
			continue
		}
		if err := add(sp.name, sp.cols, sp.rows, sp.experts, sp.norm); err != nil {
			return nil, err
		}
	}
	if a.PerLayer != nil {
		if err := addRopeFreqs(w, s); err != nil {
			return nil, err
		}
	}
	return w, nil
}

type spec struct {
	name       string
	cols, rows int
	norm       bool
	experts    int // a 3-D expert bank of this many experts
}

// addBias writes an F32 bias vector (or one per row: experts) of small
// random values.
func addBias(w *gguf.Writer, rng *rand.Rand, name string, n, rows int) error {
	data := make([]float32, n*rows)
	for i := range data {
		data[i] = float32(rng.NormFloat64() * 0.02)
	}
	enc, err := quant.Quantize(ggml.F32, data)
	if err != nil {
		return fmt.Errorf("synth: %s: %w", name, err)
	}
	dims := []uint64{uint64(n)}
	if rows > 1 {
		dims = append(dims, uint64(rows))
	}
	return w.AddTensor(name, ggml.F32, dims, enc)
}

// addConst writes an F32 tensor of one element.
func addConst(w *gguf.Writer, name string, v float32) error {
	enc, err := quant.Quantize(ggml.F32, []float32{v})
	if err != nil {
		return fmt.Errorf("synth: %s: %w", name, err)
	}
	return w.AddTensor(name, ggml.F32, []uint64{1}, enc)
}
