package main

import (
	"fmt"
	"strings"

	"vkchat/runtime/arch"
)

// perLayerFeatures describes what differs between layers (gemma4): each
// kind of layer with its head size and rotation, the KV-shared layers and
// the caches they read, the per-layer embedding table, and the per-layer
// steps the recipe adds. Nothing for a model whose layers are alike.
func perLayerFeatures(m *arch.Model) [][2]string {
	var out [][2]string
	add := func(k, format string, a ...any) { out = append(out, [2]string{k, fmt.Sprintf(format, a...)}) }
	type kind struct {
		lc     arch.LayerConfig
		ffn    string // the FFN where experts run beside the dense one
		vFromK bool   // no attn_v: V is the K projection
		layers []int
	}
	var kinds []kind
	varies := false
	for i := range m.Layers {
		L := &m.Layers[i]
		lc := L.Config
		if lc.Kind != arch.KindAttention {
			continue // a recurrent or FFN-only layer has no heads; info_state.go lists the kinds
		}
		ffn := ""
		if L.PostDenseNorm != nil && L.Experts != nil {
			ffn = fmt.Sprintf(" beside %d of %d experts (ff %d)", m.MoE.ExpertsUsed, m.MoE.Experts, m.MoE.ExpertFF)
		}
		vFromK := L.Wv.Data != nil && len(L.Wk.Data) > 0 && &L.Wv.Data[0] == &L.Wk.Data[0]
		// (an attention layer with no FFN of its own, nemotron_h's, has
		// FF 0: not a width that differs)
		varies = varies || lc.HeadDim != m.HeadDim || lc.KVHeads != m.KVHeads || (lc.FF != m.FF && lc.FF != 0) || lc.NoRopeFactors || vFromK
		found := false
		for k := range kinds {
			o := kinds[k].lc
			if o.Window == lc.Window && o.HeadDim == lc.HeadDim && o.KVHeads == lc.KVHeads && o.FF == lc.FF &&
				o.RopeDims == lc.RopeDims && o.RopeBase == lc.RopeBase && o.NoRopeFactors == lc.NoRopeFactors &&
				kinds[k].ffn == ffn && kinds[k].vFromK == vFromK {
				kinds[k].layers = append(kinds[k].layers, i)
				found = true
				break
			}
		}
		if !found {
			kinds = append(kinds, kind{lc: lc, ffn: ffn, vFromK: vFromK, layers: []int{i}})
		}
	}
	if varies {
		var parts []string
		for _, k := range kinds {
			what := "full"
			if k.lc.Window > 0 {
				what = fmt.Sprintf("sliding %d", k.lc.Window)
			}
			rope := fmt.Sprintf("RoPE %d dims base %g", k.lc.RopeDims, k.lc.RopeBase)
			if !k.lc.NoRopeFactors && m.Rope.FreqFactors != nil {
				rope += " × rope_freqs"
			}
			v := ""
			if k.vFromK {
				v = ", V = K's projection (no attn_v)"
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s): head dim %d, %d kv heads%s, ff %d%s, %s",
				plural(len(k.layers), "layer", "layers"), layerList(k.layers), what, k.lc.HeadDim, k.lc.KVHeads, v, k.lc.FF, k.ffn, rope))
		}
		add("layer kinds", "%s", strings.Join(parts, "; "))
	}
	var shared []string
	for i := range m.Layers {
		if lc := m.Layers[i].Config; lc.SharesKV(i) {
			shared = append(shared, fmt.Sprintf("%d→%d", i, lc.KVLayer))
		}
	}
	if len(shared) > 0 {
		add("shared KV", "%d layers compute only Q and read an earlier layer's cache (%s); they hold none",
			len(shared), strings.Join(shared, ", "))
	}
	var steps []string
	if m.Block.VNorm {
		steps = append(steps, "V RMS-normalized (no weight)")
	}
	if m.Layers[0].OutScale != nil {
		steps = append(steps, "stream × layer_output_scale after each layer")
	}
	if len(steps) > 0 {
		add("per layer", "%s", strings.Join(steps, ", "))
	}
	if p := m.PLE; p != nil {
		add("per-layer embd", "%d per layer × %d layers for each of %d tokens: %s table %s (%s), mapped on the host, one token's row read per position; projection [%d → %d]",
			p.Width, len(m.Layers), p.Token.Rows, p.Token.Type, humanBytes(int64(len(p.Token.Data))), pleFormula(p), m.Embd, p.Proj.Rows)
	}
	return out
}

// pleFormula is the PLE table's size worked out: rows × row bytes.
func pleFormula(p *arch.PerLayerEmbd) string {
	rb := len(p.Token.Data) / p.Token.Rows
	return fmt.Sprintf("%d tokens × %d values × %d B/row = %d B", p.Token.Rows, p.Token.Cols, rb, len(p.Token.Data))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
