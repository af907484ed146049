package vk

import (
	"context"
	"math"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/plan"
)

// TestKVQuantAttentionMatchesCPU: layer 0's attention output of
// synth-qwen3-F32 (keys rotated at order 128, values at 64, two query
// heads a KV head) over each block-quantized cache type, keys and values
// of it, is the CPU backend's to the bit: the plan cut after the
// attention op with an identity head (whose products add exact zeros),
// a prompt as one batch and then decode steps reading the cached codes.
// The rope op's outputs reach the cache a few ulps apart from the CPU's
// (the F32 products sum in another order); at these positions of layer 0
// no code or f16 scale flips from that, so every difference left is the
// quantizer's (kvquant.comp) or the attention's (attnq.comp). At layer 1
// they do part once, with an iq4_nl cache at one decode step and one
// query head (its block scale is a least-squares fit over all 32 values,
// so an ulp anywhere in a block moves it), which is why the test stops
// at layer 0.
func TestKVQuantAttentionMatchesCPU(t *testing.T) {
	d := testDevice(t)
	m := loadModel(t, testenv.Model(t, "synth-qwen3-F32.gguf"))
	full := mustPlan(t, m, 64)
	prompt := []int32{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338}
	steps := []int32{401, 396, 267, 337, 290}
	// differ runs p on both backends with a kv cache, the prompt then the
	// steps, and counts the values of the first width that differ
	differ := func(p *plan.Plan, kv backend.KVType, width int) (n, total int, worst float64) {
		opts := backend.Options{ContextSize: 64, KVType: kv, Device: -1}
		cb, err := cpu.New(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer cb.Close()
		vb, err := newBackendOn(d, p, opts, false, true)
		if err != nil {
			t.Fatal(err)
		}
		defer vb.Close()
		ctx := context.Background()
		cmp := func(tokens []int32, pos int, all bool) {
			want, err := cb.Forward(ctx, tokens, pos, all)
			if err != nil {
				t.Fatal(err)
			}
			got, err := vb.Forward(ctx, tokens, pos, all)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(want)/p.Vocab; i++ {
				for j := 0; j < width; j++ {
					w, g := want[i*p.Vocab+j], got[i*p.Vocab+j]
					total++
					if math.Float32bits(w) != math.Float32bits(g) {
						n++
						worst = math.Max(worst, math.Abs(float64(w-g))/math.Max(math.Abs(float64(w)), 1e-3))
					}
				}
			}
		}
		cmp(prompt, 0, true)
		for i, tk := range steps {
			cmp([]int32{tk}, len(prompt)+i, false)
		}
		return n, total, worst
	}
	at := -1
	for j, op := range full.Layers[0].Ops {
		if _, ok := op.(plan.Attention); ok {
			at = j
		}
	}
	if at < 0 {
		t.Fatal("layer 0 has no attention op")
	}
	att := full.Layers[0].Ops[at].(plan.Attention)
	for _, c := range kvBlockTypes {
		t.Run(string(c.kv), func(t *testing.T) {
			n, total, worst := differ(cutPlan(full, 1, at, plan.Attn, att.Heads*att.HeadDim), c.kv, att.Heads*att.HeadDim)
			t.Logf("%s cache: layer 0's attention output, %d of %d values differ from the CPU's (largest by %.1e of the value)", c.kv, n, total, worst)
			if n != 0 {
				t.Errorf("%s cache: %d of %d attention output values differ from the CPU's, want none", c.kv, n, total)
			}
		})
	}
}
