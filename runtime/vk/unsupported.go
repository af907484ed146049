package vk

import (
	"fmt"
	"slices"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
)

// refuse compiles p (exec.go), which refuses every op kind or op form no
// kernel here computes, and checks that its weights are of types the
// kernels read; what it refuses wraps backend.ErrUnsupported, which
// `--backend auto` answers with the CPU backend. New calls it before
// opening a device for nothing.
func refuse(p *plan.Plan) (*program, error) {
	prog, err := compile(p)
	if err == nil {
		err = checkTypes(p)
	}
	if err != nil {
		return nil, fmt.Errorf("vulkan backend: a %s model: %w; the Vulkan backend does not run it yet, the CPU backend does (--backend cpu)", p.Arch, err)
	}
	return prog, nil
}

// checkTypes refuses weights of types no kernel reads: expert banks the
// mat-vec kernels have no layout for, and MXFP4 outside expert banks
// (the mat-vec kernels read it, but there is no MXFP4 embed kernel and no
// dense MXFP4 model has been checked end to end).
func checkTypes(p *plan.Plan) error {
	var banks []string
	mxfp4 := false
	forOps(p, func(_ int, op plan.Op) {
		switch o := op.(type) {
		case plan.MoE:
			for _, w := range []plan.Weight{o.Router, o.Gate, o.Up, o.Down} {
				if _, ok := layouts[w.Type]; !ok && !slices.Contains(banks, w.Type.String()) {
					banks = append(banks, w.Type.String())
				}
			}
		case plan.Embed:
			mxfp4 = mxfp4 || o.Table.Type == ggml.MXFP4
		case plan.Products:
			for _, pd := range o.Outs {
				mxfp4 = mxfp4 || pd.W.Type == ggml.MXFP4
			}
		}
	})
	var what []string
	if banks != nil {
		what = append(what, strings.Join(banks, ", ")+" expert banks")
	}
	if mxfp4 {
		what = append(what, "MXFP4 weights outside expert banks")
	}
	if what != nil {
		return unsupportedOp("%s", strings.Join(what, ", "))
	}
	return nil
}
