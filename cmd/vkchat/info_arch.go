package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"vkchat/runtime/arch"
)

// archFeatures describes what the architecture's recipe does for this
// model, one labelled line each; windows, NoPE layers, caps and
// multipliers appear only where the model has them.
func archFeatures(m *arch.Model) [][2]string {
	var out [][2]string
	add := func(k, format string, a ...any) { out = append(out, [2]string{k, fmt.Sprintf(format, a...)}) }
	b := m.Block
	var norms []string
	if b.PreNorm {
		norms = append(norms, "pre-norm")
	}
	if b.PostNorm {
		norms = append(norms, "post-norm")
	}
	switch b.QKNorm {
	case arch.QKNormHead:
		norms = append(norms, fmt.Sprintf("Q/K RMSNorm per head [%s]", headDims(m)))
	case arch.QKNormFull:
		norms = append(norms, fmt.Sprintf("Q/K RMSNorm over the full width [%d]/[%d]", m.Heads*m.HeadDim, m.KVHeads*m.HeadDim))
	}
	if b.Act.Gated() {
		add("block", "%s; FFN %s-gated", strings.Join(norms, ", "), b.Act)
	} else {
		add("block", "%s; FFN %s, no gate", strings.Join(norms, ", "), b.Act)
	}
	var attn []string
	if l := m.Layers[0]; l.Bo != nil {
		attn = append(attn, "a bias on the output projection")
	}
	if m.Layers[0].Sinks != nil {
		attn = append(attn, "a learned sink logit per head (takes probability mass, has no value)")
	}
	if q := m.QTemperature; q.Beta != 0 {
		attn = append(attn, fmt.Sprintf("temperature tuning: Q × (1 + %g·ln(1 + ⌊pos/%d⌋)) after RoPE", q.Beta, q.Length))
	}
	if a := m.MLA; a.KVLora > 0 {
		q := "a direct attn_q"
		if a.QLora > 0 {
			q = fmt.Sprintf("q_lora %d", a.QLora)
		}
		scale := fmt.Sprintf("1/√%d", a.Nope+a.Rope)
		if m.Rope.YaRN != nil {
			scale = fmt.Sprintf("YaRN's mscale² / √%d", a.Nope+a.Rope)
		}
		attn = append(attn, fmt.Sprintf("multi-head latent attention (MLA): %s, kv_lora %d, per head %d nope + %d rope, value %d; absorbed: MQA over one cached row of %d latent + %d rope a position, scale %g (%s)",
			q, a.KVLora, a.Nope, a.Rope, a.V, a.KVLora, a.Rope, a.Scale, scale))
	}
	if len(attn) > 0 {
		add("attention", "%s", strings.Join(attn, "; "))
	}
	if e := m.MoE; e.Experts > 0 {
		rule := e.Rule().String()
		// a routed layer (the last may have no FFN: nemotron_h_moe's)
		var x *arch.Experts
		for i := len(m.Layers) - 1; i >= 0 && x == nil; i-- {
			x = m.Layers[i].Experts
		}
		if x != nil && x.SelectBias != nil {
			rule += " (chosen by probability + exp_probs_b, weighted without it)"
		}
		if e.SharedFF > 0 && x != nil && x.Shared != nil {
			rule += fmt.Sprintf(", + a shared expert (ff %d)", e.SharedFF)
		}
		add("experts", "%d of %d per token (ff %d each), %s; %s of %s parameters active",
			e.ExpertsUsed, e.Experts, e.ExpertFF, rule, humanCount(m.ActiveParams()), humanCount(m.Params()))
		if m.LeadDense > 0 {
			what := "layers %s keep"
			if m.LeadDense == 1 {
				what = "layer %s keeps"
			}
			add("dense lead", what+" a dense FFN (ff %d); experts from layer %d on", layerList(seq(m.LeadDense)), m.FF, m.LeadDense)
		}
		if s := besideDense(m); s != "" {
			add("expert gating", "%s", s)
		}
	}
	if m.Heads*m.HeadDim != m.Embd {
		add("heads", "%d × head dim %d = %d ≠ embd %d", m.Heads, m.HeadDim, m.Heads*m.HeadDim, m.Embd)
	}
	var local, global, nope []int
	var lc arch.LayerConfig
	for i, l := range m.Layers {
		if l.Config.Window > 0 {
			local = append(local, i)
			lc = l.Config
		} else {
			global = append(global, i)
		}
		if !l.Config.Rope && l.Config.Kind == arch.KindAttention {
			nope = append(nope, i)
		}
	}
	out = append(out, perLayerFeatures(m)...)
	if len(local) > 0 {
		add("sliding window", "%d positions on layers %s (RoPE base %g, scale %g); full attention on %s",
			lc.Window, layerList(local), lc.RopeBase, lc.RopeScale, orNone(layerList(global)))
	}
	if len(nope) > 0 {
		add("no RoPE", "layers %s", layerList(nope))
	}
	var caps []string
	if m.AttnSoftcap != 0 {
		caps = append(caps, fmt.Sprintf("attention %g·tanh(s/%g)", m.AttnSoftcap, m.AttnSoftcap))
	}
	if m.FinalSoftcap != 0 {
		caps = append(caps, fmt.Sprintf("final logits %g·tanh(x/%g)", m.FinalSoftcap, m.FinalSoftcap))
	}
	if len(caps) > 0 {
		add("soft-caps", "%s", strings.Join(caps, ", "))
	}
	var mult []string
	if m.EmbedScale != 1 {
		mult = append(mult, fmt.Sprintf("embeddings ×%g", m.EmbedScale))
	}
	if m.ResidualScale != 1 {
		mult = append(mult, fmt.Sprintf("residual branches ×%g", m.ResidualScale))
	}
	where := "scores"
	if m.ScaleQ {
		where = "Q"
	}
	mult = append(mult, fmt.Sprintf("attention ×%.6g on %s", m.AttnScale, where))
	if m.LogitScale != 1 {
		mult = append(mult, fmt.Sprintf("logits ×%g", m.LogitScale))
	}
	add("scales", "%s", strings.Join(mult, ", "))
	return out
}

// besideDense describes experts that run beside a dense FFN (gemma4
// 26B-A4B): what the router reads, the per-expert scales, the fused bank
// and the branches' norms; "" where experts replace the dense FFN.
func besideDense(m *arch.Model) string {
	var layers []int
	var x *arch.Experts
	for i := range m.Layers {
		if l := &m.Layers[i]; l.PostDenseNorm != nil && l.Experts != nil {
			layers, x = append(layers, i), l.Experts
		}
	}
	if x == nil {
		return ""
	}
	parts := []string{"beside the dense FFN on layers " + layerList(layers)}
	if x.RouterScale != nil {
		parts = append(parts, fmt.Sprintf("router reads rms(x)/√%d ⊙ ffn_gate_inp.scale", m.Embd))
	}
	if x.DownScale != nil {
		parts = append(parts, "each expert's output × its ffn_down_exps.scale")
	}
	if x.FusedGateUp {
		parts = append(parts, "gate|up fused per expert")
	}
	parts = append(parts, "dense → post_ffw_norm_1, experts pre_ffw_norm_2 → post_ffw_norm_2, their sum → post_ffw_norm")
	return strings.Join(parts, "; ")
}

// headDims is the head size, or the sizes of the layers' kinds ("64/128").
func headDims(m *arch.Model) string {
	var ds []string
	for i := range m.Layers {
		if d := strconv.Itoa(m.Layers[i].Config.HeadDim); !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return strconv.Itoa(m.HeadDim)
	}
	return strings.Join(ds, "/")
}

// layerList writes sorted layer indexes compactly: "0-4, 6-10".
func layerList(ls []int) string {
	var parts []string
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && ls[j+1] == ls[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(ls[i])+"-"+strconv.Itoa(ls[j]))
		} else {
			parts = append(parts, strconv.Itoa(ls[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// seq is 0..n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
