package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// mamba2Kind is what synthetic layer l of a Mamba2 hybrid is. nemotron's
// one-branch layers repeat Mamba2, FFN, Mamba2, attention (the real
// pattern alternates M and "-" with a "*" every 7-10 layers); granite's
// attend every third layer (the real 4.0-H attends one layer in ten).
// A shape's Pattern, when set, says it instead (mamba2Check has checked it).
func mamba2Kind(a arch.Arch, s Shape, l int) arch.LayerKind {
	if s.Pattern != "" {
		switch s.Pattern[l] {
		case 'M':
			return arch.KindMamba2
		case '*':
			return arch.KindAttention
		}
		return arch.KindFFN
	}
	if a.SingleBranch {
		switch l % 4 {
		case 1:
			return arch.KindFFN
		case 3:
			return arch.KindAttention
		}
		return arch.KindMamba2
	}
	if l%3 == 2 {
		return arch.KindAttention
	}
	return arch.KindMamba2
}

// mamba2Dims is a synthetic Mamba2 layer's shape: inner 2·embd (granite
// requires it, Nemotron-H is close), heads of 64 values, state 128 as in
// the real models (less for tiny shapes), up to 8 B/C groups.
func mamba2Dims(s Shape) arch.Mamba2Config {
	inner := 2 * s.Embd
	hd := min(64, inner)
	heads := inner / hd
	groups := 1
	for _, g := range []int{8, 4, 2} {
		if heads%g == 0 {
			groups = g
			break
		}
	}
	return arch.Mamba2Config{ConvKernel: 4, Inner: inner, State: min(128, max(16, s.Embd/4)), Groups: groups, Heads: heads}
}

func mamba2Keys(name string) func(s Shape, _ int) map[string]any {
	a, _ := arch.Lookup(name)
	return func(s Shape, _ int) map[string]any {
		d := mamba2Dims(s)
		kv, ff := make([]int32, s.Layers), make([]int32, s.Layers)
		for l := range kv {
			switch mamba2Kind(a, s, l) {
			case arch.KindAttention:
				kv[l] = int32(s.KVHeads)
			case arch.KindFFN:
				ff[l] = int32(s.FF)
			}
			if !a.SingleBranch {
				ff[l] = int32(s.FF)
			}
		}
		keys := map[string]any{
			"attention.head_count_kv": kv, "feed_forward_length": ff,
			"ssm.conv_kernel": uint32(d.ConvKernel), "ssm.inner_size": uint32(d.Inner), "ssm.state_size": uint32(d.State),
			"ssm.group_count": uint32(d.Groups), "ssm.time_step_rank": uint32(d.Heads),
			"rope.scaling.finetuned": false, // what the converters write for these NoPE models
		}
		if a.Gating == arch.GatingSigmoid { // Nemotron 3 Nano's routing
			keys["expert_weights_norm"], keys["expert_weights_scale"] = true, float32(2.5)
		}
		if name == "granitehybrid" { // Granite 4.0-H's multipliers
			keys["embedding_scale"], keys["residual_scale"] = float32(12), float32(0.22)
			keys["attention.scale"], keys["logit_scale"] = float32(1)/float32(s.Embd/s.Heads), float32(8)
		}
		return keys
	}
}

// mamba2Check refuses shapes whose widths a weight type's blocks do not
// divide (the synth writes one type), and a layer pattern that is not a
// letter per layer of the kinds the architecture has (granite's layers
// each carry an FFN, so E is nemotron's alone).
func mamba2Check(name string) func(s Shape, t ggml.Type) error {
	a, _ := arch.Lookup(name)
	return func(s Shape, t ggml.Type) error {
		d := mamba2Dims(s)
		if b := int(t.BlockElems()); d.Inner%b != 0 {
			return fmt.Errorf("synth: the Mamba2 inner width %d is not whole %s blocks of %d", d.Inner, t, b)
		}
		if s.Pattern == "" {
			return nil
		}
		letters := "M*"
		if a.SingleBranch {
			letters = "M*E"
		}
		if len(s.Pattern) != s.Layers {
			return fmt.Errorf("synth: layer pattern %q has %d letters for %d layers", s.Pattern, len(s.Pattern), s.Layers)
		}
		if i := strings.IndexFunc(s.Pattern, func(r rune) bool { return !strings.ContainsRune(letters, r) }); i >= 0 {
			return fmt.Errorf("synth: layer pattern %q: letter %d (%q) is not one of %s's %q", s.Pattern, i, s.Pattern[i], name, letters)
		}
		return nil
	}
}

// mamba2LayerSpecs are all of synthetic layer l's tensors: the pre-norm,
// then its Mamba2 mixer or attention, then (for granite, or a nemotron
// FFN layer) its FFN, dense or routed with a shared expert.
func mamba2LayerSpecs(a arch.Arch, p string, s Shape, l, q, kv int, moe bool) []spec {
	vec := func(name string, n int) spec { return spec{p + name, n, 1, true, 0} }
	mat := func(name string, cols, rows int) spec { return spec{p + name, cols, rows, false, 0} }
	bank := func(name string, cols, rows int) spec { return spec{p + name, cols, rows, false, s.Experts} }
	specs := []spec{vec("attn_norm.weight", s.Embd)}
	kind := mamba2Kind(a, s, l)
	switch kind {
	case arch.KindMamba2:
		d := mamba2Dims(s)
		specs = append(specs, mat("ssm_in.weight", s.Embd, d.InProj()), mat("ssm_conv1d.weight", d.ConvKernel, d.ConvChannels()),
			spec{p + "ssm_conv1d.bias", d.ConvChannels(), 1, false, 0}, spec{p + "ssm_dt.bias", d.Heads, 1, false, 0},
			spec{p + "ssm_a", 1, d.Heads, false, 0}, spec{p + "ssm_d", 1, d.Heads, false, 0},
			spec{p + "ssm_norm.weight", d.Inner / d.Groups, d.Groups, false, 0}, mat("ssm_out.weight", d.Inner, s.Embd))
	case arch.KindAttention:
		specs = append(specs, mat("attn_q.weight", s.Embd, q), mat("attn_k.weight", s.Embd, kv), mat("attn_v.weight", s.Embd, kv),
			mat("attn_output.weight", q, s.Embd))
	}
	if a.SingleBranch && kind != arch.KindFFN {
		return specs
	}
	if !a.SingleBranch {
		specs = append(specs, vec("ffn_norm.weight", s.Embd))
	}
	gated := a.Block.Act.Gated()
	switch {
	case moe:
		specs = append(specs, mat("ffn_gate_inp.weight", s.Embd, s.Experts))
		if gated {
			specs = append(specs, bank("ffn_gate_exps.weight", s.Embd, s.ExpertFF), mat("ffn_gate_shexp.weight", s.Embd, s.SharedFF))
		}
		specs = append(specs, bank("ffn_up_exps.weight", s.Embd, s.ExpertFF), bank("ffn_down_exps.weight", s.ExpertFF, s.Embd),
			mat("ffn_up_shexp.weight", s.Embd, s.SharedFF), mat("ffn_down_shexp.weight", s.SharedFF, s.Embd))
		if a.Gating == arch.GatingSigmoid {
			specs = append(specs, spec{p + "exp_probs_b.bias", s.Experts, 1, false, 0})
		}
	default:
		if gated {
			specs = append(specs, mat("ffn_gate.weight", s.Embd, s.FF))
		}
		specs = append(specs, mat("ffn_up.weight", s.Embd, s.FF), mat("ffn_down.weight", s.FF, s.Embd))
	}
	return specs
}

// addMamba2Vector writes a Mamba2 layer's per-head and norm tensors, which
// are F32 of their own shapes: ssm_a [1 x H] = −exp(A_log) in (−e, −0.6),
// ssm_d [1 x H] near 1, ssm_norm [inner/G x G] ones. It reports whether
// sp was one of them.
func addMamba2Vector(w *gguf.Writer, rng *rand.Rand, sp spec) (bool, error) {
	data := make([]float32, sp.cols*sp.rows)
	switch {
	case strings.HasSuffix(sp.name, ".ssm_a"):
		for i := range data {
			data[i] = -float32(0.6 + 2*rng.Float64())
		}
	case strings.HasSuffix(sp.name, ".ssm_d"):
		for i := range data {
			data[i] = float32(1 + 0.3*rng.NormFloat64())
		}
	case strings.HasSuffix(sp.name, ".ssm_norm.weight"):
		for i := range data {
			data[i] = 1
		}
	default:
		return false, nil
	}
	enc, err := quant.Quantize(ggml.F32, data)
	if err != nil {
		return true, fmt.Errorf("synth: %s: %w", sp.name, err)
	}
	return true, w.AddTensor(sp.name, ggml.F32, []uint64{uint64(sp.cols), uint64(sp.rows)}, enc)
}
