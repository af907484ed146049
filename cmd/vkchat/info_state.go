package main

import (
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/cpu"
)

// stateInfo describes a hybrid model's layers and what its recurrent ones
// keep: a state of a fixed size, whatever the context (the KV figures
// above count the attention layers only), and the copies of it the CPU
// backend keeps to go back to (checkpoints), and the MTP head a qwen35
// file may carry after its layers. Nothing for attention-only models.
func stateInfo(w func(k, format string, a ...any), m *arch.Model) {
	if m.RecurrentLayers() == 0 {
		return
	}
	var kinds strings.Builder
	for i := range m.Layers {
		k := m.Layers[i].Config.Kind
		if k == arch.KindAttention {
			kinds.WriteByte('A')
		} else {
			kinds.WriteString(k.String()[:1])
		}
	}
	w("layer kinds", "%s (%s; A attention)", m.LayerKinds(), kinds.String())
	if c := m.Mamba2; c.Inner > 0 {
		w("mamba2", "in-proj → z %d | xBC %d (x %d, B and C %d groups × %d) | dt %d; causal conv of %d taps + bias, SiLU; %d heads of %d scan a %d-wide state (heads %d per B/C group): decay e^(softplus(dt + dt_bias)·A), D skip; y × SiLU(z), RMS-normed in %d groups of %d",
			c.Inner, c.ConvChannels(), c.Inner, c.Groups, c.State, c.Heads, c.ConvKernel, c.Heads, c.HeadDim(), c.State, c.Heads/c.Groups, c.Groups, c.Inner/c.Groups)
	}
	if m.ShortConvL > 0 {
		w("short conv", "kernel %d over embd %d, no activation; the state keeps the last %d inputs per channel", m.ShortConvL, m.Embd, m.ShortConvL-1)
	}
	w("recurrent state", "%s: %s, whatever the context", humanBytes(m.StateBytes()), m.StateFormula())
	w("checkpoints", "up to %d copies of the state on the CPU backend = %s at most", cpu.MaxCheckpoints, humanBytes(int64(cpu.MaxCheckpoints)*m.StateBytes()))
	if x := m.MTP; x != nil {
		lc := &x.Layer.Config
		w("mtp head", "blk.%d (NextN): drafts the token after next from a token and the trunk's hidden state; one attention layer with a KV cache of its own (%d kv heads × %d head dim per position), head norm %s, output %s; not run by the main pass (eval --mtp)",
			x.Block, lc.KVHeads, lc.HeadDim, x.HeadNorm.Name, x.Output.Name)
	}
}
