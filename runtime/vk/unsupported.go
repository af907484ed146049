package vk

import (
	"fmt"
	"slices"
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
)

// unsupported lists what a model's recipe asks for that this backend's
// shaders do not compute yet (the CPU backend computes all of it), so that
// such a model is refused by name instead of run wrong; "" when none.
func unsupported(m *arch.Model) string {
	var what []string
	add := func(ok bool, s string) {
		if ok {
			what = append(what, s)
		}
	}
	// Experts run as moe.go records them: gating by moe_route.comp (the
	// softmax-top-k-renormalize of qwen3moe, the top-k-softmax of
	// gpt-oss), banks of the types the mat-vec kernels read, per-expert
	// biases by the mat-vec's BIAS rows.
	var moeTypes []string
	for i := range m.Layers {
		if x := m.Layers[i].Experts; x != nil {
			for _, w := range []arch.Weight{x.Router, x.Gate, x.Up, x.Down} {
				if _, ok := layouts[w.Type]; !ok && !slices.Contains(moeTypes, w.Type.String()) {
					moeTypes = append(moeTypes, w.Type.String())
				}
			}
		}
	}
	// deepseek2's latent attention (its K-only cache of latent rows, the
	// absorbed query) has no shaders yet
	add(m.MLA.KVLora > 0, "multi-head latent attention (MLA)")
	add(m.MoE.Experts > 0 && m.MoE.Gating != arch.GatingSoftmaxTopKNorm && m.MoE.Gating != arch.GatingTopKSoftmax, "mixture-of-experts gating "+m.MoE.Gating.String())
	add(moeTypes != nil, strings.Join(moeTypes, ", ")+" expert banks")
	// MXFP4 is read by the mat-vec kernels, but there is no MXFP4 embed
	// kernel and no dense MXFP4 model has been checked end to end.
	var mxfp4 bool
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, w := range []arch.Weight{l.Wq, l.Wk, l.Wv, l.Wo, l.Gate, l.Up, l.Down} {
			mxfp4 = mxfp4 || w.Type == ggml.MXFP4
		}
	}
	add(mxfp4 || m.Output.Type == ggml.MXFP4 || m.TokenEmbd.Type == ggml.MXFP4, "MXFP4 weights outside expert banks")
	// Gated DeltaNet layers run as deltanet.go records them: the conv
	// kernel holds up to 8 taps, the delta kernel a workgroup of S
	// invocations with an S-float row of the state each.
	var shared bool
	for i := range m.Layers {
		shared = shared || (m.Layers[i].Experts != nil && m.Layers[i].Experts.Shared != nil)
	}
	if d := m.DeltaNet; m.RecurrentLayers() > 0 {
		add(d.ConvKernel > 8, fmt.Sprintf("a DeltaNet conv of %d taps (the kernel holds 8)", d.ConvKernel))
		add(d.StateSize > 256, fmt.Sprintf("a DeltaNet state of %d (the kernel holds 256)", d.StateSize))
	}
	var besideDense bool
	for i := range m.Layers {
		besideDense = besideDense || m.Layers[i].PostDenseNorm != nil
	}
	add(besideDense, "experts beside a dense FFN (gemma4 26B-A4B: a router reading rms(x)/√embd ⊙ its scale, per-expert output scales, a fused gate|up bank, the branches' own norms)")
	add(m.QTemperature.Beta != 0, "the attention temperature tuning (Q × a factor of its position)")
	add(shared && (m.Block.PostNorm || one(m.ResidualScale) != 1), "a shared expert with a post-norm or residual scale")
	// Mamba2 hybrids (nemotron_h, granitehybrid): no shader runs the
	// Mamba2 mixer's conv and scan, nor a layer that is an FFN alone, nor
	// ReLU² (the CPU backend runs them all).
	var mamba2, ffnOnly bool
	for i := range m.Layers {
		mamba2 = mamba2 || m.Layers[i].Mamba2 != nil
		ffnOnly = ffnOnly || m.Layers[i].Config.Kind == arch.KindFFN
	}
	add(mamba2, "Mamba2 mixer layers (the selective scan)")
	add(ffnOnly, "layers that are an FFN alone")
	add(m.Block.Act == arch.ActReLU2, "the ReLU² FFN")
	return strings.Join(what, ", ")
}

// refuseUnsupported is New's check; it wraps backend.ErrUnsupported, which
// `--backend auto` answers with the CPU backend.
func refuseUnsupported(m *arch.Model) error {
	if s := unsupported(m); s != "" {
		return fmt.Errorf("vulkan backend: %s (%s) has %s, which the Vulkan backend does not run yet; the CPU backend does (--backend cpu): %w",
			m.Name, m.Arch, s, backend.ErrUnsupported)
	}
	return nil
}
