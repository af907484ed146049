package vk

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// refGELU is GELU-tanh as llama.cpp's CPU backend computes it and
// runtime/cpu does: x rounded to F16, looked up in the table of F16
// results (quant.GELUTable); 0 at or below -10, x at or above 10.
func refGELU(x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return quant.GELUTable()[quant.FP32ToFP16(x)]
}

// TestGELUMatchesCPUTable runs the kernels' GELU (common.glsl's gelu_f16,
// through ple.comp's MODE 1 with an input of ones) over every F16 value,
// over the midpoints between neighbouring F16 values (x's rounding to F16,
// ties included) and over random f32 values, and wants the CPU backend's
// results bit for bit: the GELU table lookup, not a device tanh.
func TestGELUMatchesCPUTable(t *testing.T) {
	d := testDevice(t)
	const n = 1 << 16
	const P = 256 // per token; n/P tokens, one workgroup each
	every := make([]float32, n)
	mid := make([]float32, n)
	for i := range every {
		every[i] = quant.FP16ToFP32(uint16(i))
		// the midpoint is exact in f32: an F16 has 11 significant bits
		a, b := float64(quant.FP16ToFP32(uint16(i))), float64(quant.FP16ToFP32(uint16(i+1)))
		mid[i] = float32((a + b) / 2)
	}
	rng := rand.New(rand.NewSource(43))
	random := make([]float32, n)
	for i := range random {
		switch i % 3 {
		case 0:
			random[i] = float32(rng.NormFloat64() * 4)
		case 1:
			random[i] = float32((rng.Float64()*2 - 1) * 12)
		default: // around F16's subnormal range
			random[i] = float32(rng.NormFloat64() * 1e-4)
		}
	}
	k, err := d.kernel("ple", 9*4, d.Info.SureSubgroup()*4, 1)
	if err != nil {
		t.Fatal(err)
	}
	gelu, err := d.geluArg(true)
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	step := stepBuffer(t, d, n/P, 0, nil)
	for _, c := range []struct {
		name string
		x    []float32
	}{{"every F16", every}, {"midpoints", mid}, {"random", random}} {
		in, g := hostFloats(t, d, "in", ones), hostFloats(t, d, "gate", c.x)
		runOnce(t, d, func(r *vulkan.Recorder) error {
			return r.Dispatch("gelu", k, []vulkan.Arg{{B: in, Format: fmtU32}, {B: in, Format: fmtU32}, {B: in, Write: true}, {B: g, Write: true}, vulkan.R(step), gelu},
				[]uint32{P, 1, P, P, 0, 0, 0, 0, 0}, n/P, 1, 1)
		})
		got := readFloats(g, n)
		bad := 0
		for i, x := range c.x {
			want := refGELU(x)
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got[i]))) {
				if bad++; bad <= 5 {
					t.Errorf("%s: gelu(%g) (F16 %#04x) = %g, CPU table %g", c.name, x, quant.FP32ToFP16(x), got[i], want)
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d differ", c.name, bad, n)
		}
	}
}

// TestMatvecGELU checks the GELU-gated FFN epilogue (matvec.comp's ACT):
// gate and up paired in one dispatch for one token and for a batch, and
// the up-after-gate epilogue used when their types differ or K is split.
// The pre-activations span ±10, so both cut-offs are crossed.
func TestMatvecGELU(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(12))
	for _, c := range []mvCase{
		{typ: ggml.Q8_0, rows: 37, cols: 768, ntok: 1, norm: true, pair: true, gelu: true},
		{typ: ggml.Q4_K, rows: 29, cols: 1024, ntok: 9, norm: true, pair: true, gelu: true},
		{typ: ggml.F32, rows: 13, cols: 512, ntok: 3, epi: epiSwiGLU, gelu: true},
		{typ: ggml.Q8_0, rows: 13, cols: 4096, ntok: 2, epi: epiSwiGLU, gelu: true}, // K split into chunks
	} {
		t.Run(fmt.Sprintf("%s/%dx%d/ntok%d/pair%v/epi%d", c.typ, c.rows, c.cols, c.ntok, c.pair, c.epi), func(t *testing.T) {
			checkMatvec(t, d, c, rng)
		})
	}
}

// TestGELUCutoffs pins the reference's edges to llama.cpp's rule.
func TestGELUCutoffs(t *testing.T) {
	for _, c := range []struct{ x, want float32 }{{-10, 0}, {-11, 0}, {10, 10}, {12.5, 12.5}, {0, 0}} {
		if got := refGELU(c.x); got != c.want {
			t.Errorf("gelu(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	// just inside the cut-off the table's F16 result is x to F16 precision
	if got := refGELU(9.99); math.Abs(float64(got)-9.99) > 0.01 {
		t.Errorf("gelu(9.99) = %g", got)
	}
}

// TestResidual checks residual.comp: x += rs·(rms(o)·w) with a post-norm
// and x += rs·o without, for a batch with a token past the step's count
// left alone, against runtime/cpu's rounding ((o·scale)·w, the mean in
// float64).
func TestResidual(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(13))
	for _, c := range []struct {
		n    int
		norm bool
		rs   float32
	}{{256, true, 1}, {200, false, 0.22}, {2048, true, 0.5}, {72, false, 1}} {
		t.Run(fmt.Sprintf("n%d/norm%v/rs%g", c.n, c.norm, c.rs), func(t *testing.T) {
			const ntok, eps = 3, 1e-6
			stride := int(alignUp(uint64(c.n), 256))
			o := randomVec(ntok*stride, rng)
			x := randomVec(ntok*stride, rng)
			w := randomVec(c.n, rng)
			ob, _ := d.NewBuffer("o", uint64(4*len(o)), vulkan.MemDevice)
			xb, _ := d.NewBuffer("x", uint64(4*len(x)), vulkan.MemDevice)
			wb, _ := d.NewBuffer("w", uint64(4*len(w)), vulkan.MemDevice)
			ob.Write(0, f32bytes(o))
			xb.Write(0, f32bytes(x))
			wb.Write(0, f32bytes(w))
			step := stepBuffer(t, d, ntok-1, 0, nil) // the last token is not in the batch
			b := &Backend{d: d, act: activations{o: ob, x: xb, xStride: stride}, graph: graph{step: step}, plan: &plan.Plan{Embd: c.n}}
			var norm *vulkan.Buffer
			if c.norm {
				norm = wb
			}
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return b.recordBranchEnd(r, "residual", norm, eps, c.rs, bodyShape{cap: ntok})
			})
			raw := make([]byte, 4*len(x))
			xb.Read(0, raw)
			got := bytesF32(raw)
			var ref, res []float32
			for tk := 0; tk < ntok; tk++ {
				row := got[tk*stride : (tk+1)*stride]
				if tk == ntok-1 {
					for i, v := range row {
						if v != x[tk*stride+i] {
							t.Fatalf("token %d beyond the batch was changed at %d", tk, i)
						}
					}
					continue
				}
				br := append([]float32(nil), o[tk*stride:tk*stride+c.n]...)
				if c.norm {
					refNorm(br, w, eps)
				}
				for i := 0; i < c.n; i++ {
					ref = append(ref, x[tk*stride+i]+br[i]*c.rs)
					res = append(res, row[i])
				}
				for i := c.n; i < stride; i++ {
					if row[i] != x[tk*stride+i] {
						t.Fatalf("token %d: padding changed at %d", tk, i)
					}
				}
			}
			// float32 sums of squares against float64: one-ulp scales
			if e := nmse(ref, res); e > 1e-12 {
				t.Errorf("NMSE %.3g over 1e-12", e)
			} else {
				t.Logf("NMSE %.3g", e)
			}
		})
	}
}

// TestLogitsScaleCap checks logits.comp: the logit scale and the final
// soft-cap as llama.cpp's graph builds them (scale by 1/cap, tanh, scale by
// cap), for the last token only and for every token of a batch.
func TestLogitsScaleCap(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(14))
	for _, c := range []struct {
		scale, cap float32
		last       bool
	}{{0.125, 0, true}, {1, 30, false}, {1, 8, true}, {0.5, 8, false}} {
		t.Run(fmt.Sprintf("scale%g/cap%g/last%v", c.scale, c.cap, c.last), func(t *testing.T) {
			const vocab, ntok = 1000, 4
			lg := randomVec(ntok*vocab, rng)
			for i := range lg {
				lg[i] *= 20 // well into tanh's flat part
			}
			b := &Backend{d: d, plan: &plan.Plan{Vocab: vocab}}
			b.act.logits, _ = d.NewBuffer("logits", uint64(4*len(lg)), vulkan.MemHost)
			b.act.logits.Write(0, f32bytes(lg))
			b.graph.step = stepBuffer(t, d, ntok-1, 0, nil)
			runOnce(t, d, func(r *vulkan.Recorder) error { return b.recordLogits(r, bodyShape{cap: ntok}, c.last, c.scale, c.cap) })
			raw := make([]byte, 4*len(lg))
			b.act.logits.Read(0, raw)
			got := bytesF32(raw)
			done := ntok - 1
			if c.last {
				done = 1
			}
			var ref, res []float32
			for i, v := range lg {
				if i >= done*vocab {
					if got[i] != v {
						t.Fatalf("logit %d beyond the step's was changed", i)
					}
					continue
				}
				w := v * c.scale
				if c.cap != 0 {
					w = c.cap * float32(math.Tanh(float64(w*(1/c.cap))))
				}
				ref = append(ref, w)
				res = append(res, got[i])
			}
			if e := nmse(ref, res); e > 1e-12 {
				t.Errorf("NMSE %.3g over 1e-12", e)
			} else {
				t.Logf("NMSE %.3g", e)
			}
		})
	}
}

// TestPlanLayers checks the per-layer resolution: one RoPE table per
// distinct base and scale, NoPE layers, and ring caches of window + chunk
// - 1 positions only where that is below the context.
func TestPlanLayers(t *testing.T) {
	m := &arch.Model{Config: arch.Config{Heads: 2, KVHeads: 1, HeadDim: 64, Rope: arch.Rope{Base: 1e6, Scale: 0.125, Dims: 64}}}
	m.Layers = []arch.Layer{
		{Config: arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1, Window: 512}},
		{Config: arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1, Window: 512}},
		{Config: arch.LayerConfig{Rope: true, RopeBase: 1e6, RopeScale: 0.125}},
		{Config: arch.LayerConfig{Rope: false, RopeBase: 1e6, RopeScale: 0.125}},
		{Config: arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1, Window: 4096}},
		{}, // assembled by hand: the global RoPE
	}
	b := &Backend{plan: mustPlan(t, m, 2048)}
	if err := b.planLayers(); err != nil {
		t.Fatal(err)
	}
	want := []layerPlan{
		{rope: true, table: 0, window: 512, slots: 512 + prefillChunk - 1},
		{rope: true, table: 0, window: 512, slots: 512 + prefillChunk - 1},
		{rope: true, table: 1, slots: 2048},
		{rope: false, slots: 2048},
		{rope: true, table: 0, window: 4096, slots: 2048}, // the window exceeds the context
		{rope: true, table: 1, slots: 2048},
	}
	for i := range want {
		// assembled without the loader: the model-wide geometry, own caches
		want[i].headDim, want[i].kvHeads, want[i].dims, want[i].kvLayer = 64, 1, 64, i
		if want[i].rope {
			want[i].neox = false
		}
		if b.plans[i] != want[i] {
			t.Errorf("layer %d: %+v, want %+v", i, b.plans[i], want[i])
		}
	}
	type key struct {
		base, scale float32
		dims        int
	}
	tab := func(i int) key { t := b.graph.ropeTables[i]; return key{t.base, t.scale, t.dims} }
	if len(b.graph.ropeTables) != 2 || tab(0) != (key{10000, 1, 64}) || tab(1) != (key{1e6, 0.125, 64}) {
		t.Errorf("tables %v", b.graph.ropeTables)
	}
}

// TestRingRewind: decoding forward always keeps what the next step needs;
// a rewind is found to need a replay exactly when the ring has overwritten
// a position the rewound step's window sees.
func TestRingRewind(t *testing.T) {
	const window, ctx = 8, 512
	slots := window + prefillChunk - 1
	plans := []layerPlan{{window: window, slots: slots}, {slots: ctx}}
	c := &cache{ringLow: make([]int, 2)}
	keeps := func(pos int) bool { return c.ringsKeep(plans, ctx, pos) }
	for pos := 0; pos < 300; pos++ {
		if !keeps(pos) {
			t.Fatalf("decode at %d needs a replay", pos)
		}
		c.wrote(plans, pos, 1)
	}
	// positions 300-slots .. 299 are held; a step at p sees p-window+1..p
	lowest := 300 - slots
	if !keeps(lowest + window - 1) {
		t.Errorf("rewind to %d, whose window is still held, needs a replay", lowest+window-1)
	}
	c.wrote(plans, lowest+window-1, 5)
	if keeps(lowest + window - 3) {
		t.Errorf("rewind past the ring does not ask for a replay")
	}
	if !keeps(0) {
		t.Errorf("a fresh start at 0 needs a replay")
	}
	c.wrote(plans, 0, 10)
	if !keeps(10) {
		t.Errorf("decoding after a fresh start needs a replay")
	}
}
