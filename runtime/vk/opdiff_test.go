package vk

import (
	"context"
	"fmt"
	"math"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
)

// TestF32PrefixMatchesCPU runs each all-F32 model's plan cut after each op
// of its first layers on both backends, over the reference prompt as one
// batch, with an identity head in place of the model's: the logits are
// the op's output to the bit (an identity product adds exact zeros, in
// any order). With -v it logs, per op and position, how many values
// differ from the CPU backend's and the largest relative difference: where
// the two backends part, op by op. Where a case claims exactness (every op
// of every layer it runs gives the CPU's bits at every position), a
// differing value fails it on a device laid out as a CPU (the GPU layout's
// shared-x mat-vec sums F32 rows in its own order, matvec.go
// orderedPlan); every case holds its first layer's attention output at
// position 0 (V through the f16 cache, where one position's softmax is 1)
// to the CPU's bits. A fused run of ops (a MoE with its shared expert and
// residual) is compared where the run ends; an op writing a buffer no
// product reads (a mixer's Out, which its residual add takes in) is
// compared at that add. A quantized file runs where the case says it
// rounds as the CPU's (tuning.cpuRounding); a hybrid's attention check is
// its first layer with attention, where the layers before it claim
// exactness.
func TestF32PrefixMatchesCPU(t *testing.T) {
	shared := testDevice(t) // skips without Vulkan
	prompt := []int32{1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337}
	for _, c := range []struct {
		model       string // under the shared models
		layers      int    // the first layers cut; 0: all, and the whole plan's logits
		exact       bool   // every op of every layer run gives the CPU's bits
		cpuRounding bool   // a quantized model rounded as the CPU's (tuning.cpuRounding)
	}{
		// every layer and the head's final soft-cap (logits.comp's
		// tanh_exact)
		{"2026b/synth-gemma4moe-F32", 0, true, false},
		{"2026/synth-gemma4-F32", 0, true, false},
		// MLA (attnq.comp's f16 path), the dense lead's SiLU, sigmoid
		// routing with groups, the shared expert's sum
		{"2026b/synth-deepseek2-F32", 0, true, false},
		{"2026/synth-qwen3moe-F32", 0, true, false},
		{"2026/synth-gpt-oss-F32", 0, true, false},
		{"2026b/synth-mistral3-F32", 0, true, false},
		{"synth-qwen3-F32", 0, true, false},
		{"synth-gemma3-F32", 0, true, false},
		{"synth-phi3-F32", 0, true, false},
		{"synth-smollm3-F32", 0, true, false},
		{"synth-olmo2-F32", 0, true, false},
		{"synth-granite-F32", 0, true, false},
		// the attention's soft-cap and the final one (tanh_exact)
		{"synth-gemma2-F32", 0, true, false},
		// hybrids, logged: Mamba2 and DeltaNet part at layer 0's mixer
		// (their SiLUs, softplus and exps are the device's, their conv,
		// scan and norm sums the shaders' own)
		{"2026b/synth-nemotron_h-F32", 0, false, false},
		{"2026b/synth-granitehybrid-F32", 0, false, false},
		{"2026/synth-qwen35-F32", 0, false, false},
		{"2026/synth-qwen35moe-F32", 0, false, false},
		{"2026b/synth-nemotron_h_moe-F32", 0, false, false},
		// short convolutions; the quantized file rounded as the CPU's: its
		// conv projections take the exact kernel (shortconv.go convXQ)
		{"2026/synth-lfm2-F32", 0, true, false},
		{"2026/synth-lfm2-Q4_K_M", 0, true, true},
	} {
		t.Run(c.model, func(t *testing.T) {
			m := loadModel(t, testenv.Model(t, c.model+".gguf"))
			// a device per model: the arena keeps every buffer's space
			// until its device closes, and the cuts of whole plans would
			// fill one device's heap (the shared one's, for the tests
			// after this one)
			d, err := openGPU(-1)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := d.Close(); err != nil {
					t.Error(err)
				}
			}()
			d.tune = shared.tune
			if c.cpuRounding {
				tu := d.tune
				tu.cpuRounding = true
				withTuning(t, d, tu)
			}
			f32PrefixMatchesCPU(t, d, m, prompt, c.layers, c.exact)
		})
	}
}

func f32PrefixMatchesCPU(t *testing.T, d *gpu, m *arch.Model, prompt []int32, layers int, exact bool) {
	opts := backend.Options{ContextSize: 64, KVType: backend.KVF16, Device: -1}
	full := mustPlan(t, m, opts.ContextSize)
	whole := layers == 0
	if whole {
		layers = len(full.Layers)
	}
	// diffs runs p on both backends: per position, the values that
	// differ and the largest difference relative to the CPU's value (or
	// to 1e-3, nearer zero); ok false where Vulkan refuses the cut (a
	// buffer a fused kernel never writes, products with no reader)
	diffs := func(p *plan.Plan, width int) (n []int, rel []float64, ok bool) {
		cb, err := cpu.New(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer cb.Close()
		vb, err := newBackendOn(d, p, opts, false, true)
		if err != nil {
			return nil, nil, false
		}
		defer vb.Close()
		ctx := context.Background()
		want, err := cb.Forward(ctx, prompt, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := vb.Forward(ctx, prompt, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range prompt {
			nd, worst := 0, 0.0
			for j := 0; j < width; j++ {
				w, g := want[i*p.Vocab+j], got[i*p.Vocab+j]
				if math.Float32bits(w) != math.Float32bits(g) {
					nd++
					worst = math.Max(worst, math.Abs(float64(w-g))/math.Max(math.Abs(float64(w)), 1e-3))
				}
			}
			n, rel = append(n, nd), append(rel, worst)
		}
		return n, rel, true
	}
	attnLayer, compared := 0, 0
	for L := 1; L <= layers; L++ {
		for j, op := range full.Layers[L-1].Ops {
			var outs []plan.Buf
			var ws []int
			isAttn := false
			switch o := op.(type) {
			case plan.Norm:
				outs, ws = []plan.Buf{o.Out}, []int{o.Width}
			case plan.Products:
				for _, pd := range o.Outs {
					outs, ws = append(outs, pd.Out), append(ws, pd.W.Rows)
				}
			case plan.Rope:
				outs, ws = o.Bufs, o.Widths
			case plan.Attention:
				outs, ws, isAttn = []plan.Buf{plan.Attn}, []int{o.Heads * o.HeadDim}, true
			case plan.MLA:
				outs, ws, isAttn = []plan.Buf{plan.Attn}, []int{o.Heads * o.Shape.V}, true
			case plan.GLU:
				outs, ws = []plan.Buf{plan.Gate}, []int{o.Width}
			case plan.MoE:
				outs, ws = []plan.Buf{o.Out}, []int{full.Embd}
			case plan.SharedExpert:
				outs, ws = []plan.Buf{o.Out}, []int{full.Embd}
			case plan.ShortConv:
				outs, ws = []plan.Buf{o.Out}, []int{full.Embd}
			case plan.Mamba2:
				outs, ws = []plan.Buf{o.Out}, []int{full.Embd}
			case plan.DeltaNet:
				outs, ws = []plan.Buf{o.Out}, []int{full.Embd}
			case plan.Residual:
				outs, ws = []plan.Buf{plan.X}, []int{full.Embd}
			default:
				outs, ws = []plan.Buf{plan.X}, []int{full.Embd}
			}
			for i, b := range outs {
				n, rel, ok := diffs(cutPlan(full, L, j, b, ws[i]), ws[i])
				if !ok {
					continue
				}
				compared++
				s, off := "", 0
				for p := range n {
					s += fmt.Sprintf(" %3d/%.0e", n[p], rel[p])
					off += n[p]
				}
				t.Logf("layer %d op %2d %-16T %-5v%s", L-1, j, op, b, s)
				// the first layer with attention (a hybrid's first may mix
				// otherwise), checked where what runs before it gives the
				// CPU's bits: layer 0, or a case claiming every op
				if isAttn && (attnLayer == 0 || attnLayer == L) {
					attnLayer = L
					if (L == 1 || exact) && n[0] != 0 {
						t.Errorf("layer %d's attention: %d of %d values at position 0 differ from the CPU's (largest by %.1e of the value)", L-1, n[0], ws[i], rel[0])
					}
				}
				if exact && !d.tune.sharedX && off != 0 {
					t.Errorf("layer %d op %d (%T, %v): %d values over the prompt differ from the CPU's", L-1, j, op, b, off)
				}
			}
		}
	}
	if exact && !d.tune.sharedX && whole {
		// every layer: the model's own head too, its logits the CPU's
		n, rel, ok := diffs(full, full.Vocab)
		if !ok {
			t.Fatal("Vulkan refused the whole plan")
		}
		for p := range n {
			if n[p] != 0 {
				t.Errorf("position %d: %d of %d logits differ from the CPU's (largest by %.1e)", p, n[p], full.Vocab, rel[p])
			}
		}
	}
	if attnLayer == 0 {
		t.Fatal("no layer run has an attention op Vulkan runs cut")
	}
	if compared == 0 {
		t.Fatal("Vulkan refused every cut")
	}
}

// cutPlan is full's plan with its first layers layers, the last one's ops
// up to op j, the layers after it left without ops (so that what spans
// every layer, Gemma 4's per-layer inputs, keeps its shape), and a head
// that copies buffer buf (width values a token) into the logits: an
// identity product adds exact zeros, in any order, so the logits are that
// op's output to the bit on either backend.
func cutPlan(full *plan.Plan, layers, j int, buf plan.Buf, width int) *plan.Plan {
	p := *full
	p.Layers = append([]plan.Layer(nil), full.Layers...)
	p.Layers[layers-1].Ops = p.Layers[layers-1].Ops[:j+1]
	for l := layers; l < len(p.Layers); l++ {
		p.Layers[l].Ops = nil
	}
	id := make([]byte, 4*width*p.Vocab)
	for i := 0; i < width; i++ {
		putF32(id, 4*(i*width+i), 1)
	}
	w := plan.Weight{Name: "identity", Type: ggml.F32, Cols: width, Rows: p.Vocab, Data: id}
	p.Head = []plan.Op{plan.Products{In: buf, Outs: []plan.Product{{Out: plan.Logits, W: w}}}}
	p.Matrices = append(append([]plan.Weight(nil), p.Matrices...), w)
	return &p
}
