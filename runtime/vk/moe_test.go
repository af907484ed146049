package vk

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// refRoute is the gating rule (arch.Gating.Route, which the CPU backend
// routes with) for one token: what the route kernel must reproduce.
func refRoute(g arch.Gating, logits []float32, k int) ([]uint32, []float32) {
	sel, w := make([]int32, k), make([]float32, k)
	g.Route(slices.Clone(logits), make([]int32, len(logits)), sel, w)
	ids := make([]uint32, k)
	for j, id := range sel {
		ids[j] = uint32(id)
	}
	return ids, w
}

func deviceFloats(t *testing.T, d *gpu, name string, v []float32) *vulkan.Buffer {
	t.Helper()
	b, err := d.NewBuffer(name, uint64(4*len(v)+64), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(0, f32bytes(v)); err != nil {
		t.Fatal(err)
	}
	return b
}

func readBack(t *testing.T, b *vulkan.Buffer, n int) []byte {
	t.Helper()
	out := make([]byte, 4*n)
	if err := b.Read(0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMoERoute checks moe_route.comp against the CPU's gating for both
// rules: random logits, and rows built with exact ties (equal logits must
// go to the lower id, as the stable sort on the CPU orders them) and with
// one expert far ahead (the others' probabilities vanish). The ids must be
// the same; the weights differ by the exponential's last bits at most.
func TestMoERoute(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(24))
	for _, c := range []struct {
		g    arch.Gating
		e, k int
	}{{arch.GatingSoftmaxTopKNorm, 8, 2}, {arch.GatingSoftmaxTopKNorm, 128, 8}, {arch.GatingTopKSoftmax, 32, 4}, {arch.GatingTopKSoftmax, 8, 8}} {
		t.Run(fmt.Sprintf("%s/E%d/k%d", c.g, c.e, c.k), func(t *testing.T) {
			const ntok = 7
			stride := c.e + 3
			logits := make([]float32, ntok*stride)
			for tk := 0; tk < ntok; tk++ {
				row := logits[tk*stride : tk*stride+c.e]
				for i := range row {
					row[i] = float32(rng.NormFloat64() * 2)
				}
				switch tk {
				case 1: // every logit equal
					for i := range row {
						row[i] = 0.5
					}
				case 2: // pairs of equal logits straddling the k-th place
					for i := range row {
						row[i] = float32(i / 2)
					}
				case 3: // ties among a few values, shuffled
					for i := range row {
						row[i] = float32(rng.Intn(3))
					}
				case 4: // one expert far ahead
					row[c.e/2] = 90
				}
			}
			lb := deviceFloats(t, d, "logits", logits)
			ids, _ := d.NewBuffer("ids", uint64(4*ntok*c.k), vulkan.MemDevice)
			wts, _ := d.NewBuffer("wts", uint64(4*ntok*c.k), vulkan.MemDevice)
			log, _ := d.NewBuffer("log", uint64(4*3*c.k), vulkan.MemDevice) // at offset k: the batch's last token
			step := stepBuffer(t, d, ntok-1, 0, nil)                        // the last token is not in the batch
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return d.moeRoute(r, "route", c.g, c.e, c.k, lb, stride, ids, wts, log, c.k, step, ntok)
			})
			gi, gw := readBack(t, ids, ntok*c.k), bytesF32(readBack(t, wts, ntok*c.k))
			for tk := 0; tk < ntok-1; tk++ {
				ri, rw := refRoute(c.g, logits[tk*stride:tk*stride+c.e], c.k)
				for j := 0; j < c.k; j++ {
					id := binary.LittleEndian.Uint32(gi[4*(tk*c.k+j):])
					w := gw[tk*c.k+j]
					if id != ri[j] {
						t.Errorf("token %d slot %d: expert %d, want %d", tk, j, id, ri[j])
					}
					if e := math.Abs(float64(w - rw[j])); e > 4e-7*math.Max(1, math.Abs(float64(rw[j]))) {
						t.Errorf("token %d slot %d: weight %g, want %g", tk, j, w, rw[j])
					}
				}
			}
		})
	}
}

// TestMoECombine checks moe_combine.comp bit for bit against the CPU's
// weigh and residual add: each product rounded, added in slot order, then
// added to x; with scales (gemma4) each output × its expert's scale first.
func TestMoECombine(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(5))
	for _, c := range []struct{ res, scaled bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		res := c.res
		t.Run(fmt.Sprintf("residual%v/scaled%v", res, c.scaled), func(t *testing.T) {
			const ntok, k, n = 5, 3, 300
			xstride, ystride := 320, 304
			x0 := randomVec(ntok*xstride, rng)
			ys := randomVec(ntok*k*ystride, rng)
			w := randomVec(ntok*k, rng)
			xb, yb, wb := deviceFloats(t, d, "x", x0), deviceFloats(t, d, "ys", ys), deviceFloats(t, d, "w", w)
			const experts = 7
			ids := make([]uint32, ntok*k)
			scales := make([]float32, experts)
			for i := range ids {
				ids[i] = uint32(rng.Intn(experts))
			}
			for e := range scales {
				scales[e] = 0.25 + rng.Float32()*2
			}
			var idb, sb *vulkan.Buffer
			if c.scaled {
				idb, sb = deviceFloats(t, d, "ids", uint32Floats(ids)), deviceFloats(t, d, "scales", scales)
			}
			step := stepBuffer(t, d, ntok-1, 0, nil)
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return d.moeCombine(r, "combine", k, n, yb, ystride, wb, idb, sb, xb, xstride, res, step, ntok)
			})
			got := bytesF32(readBack(t, xb, len(x0)))
			for tk := 0; tk < ntok; tk++ {
				for i := 0; i < xstride; i++ {
					want := x0[tk*xstride+i]
					if tk < ntok-1 && i < n {
						var o float32
						for j := 0; j < k; j++ {
							y := ys[(tk*k+j)*ystride+i]
							if c.scaled {
								y = float32(y * scales[ids[tk*k+j]])
							}
							p := float32(y * w[tk*k+j])
							if j == 0 {
								o = p
							} else {
								o = float32(o + p)
							}
						}
						if res {
							want = float32(want + o)
						} else {
							want = o
						}
					}
					if math.Float32bits(got[tk*xstride+i]) != math.Float32bits(want) {
						t.Fatalf("token %d [%d]: %g, want %g", tk, i, got[tk*xstride+i], want)
					}
				}
			}
		})
	}
}

// TestNormInto checks residual.comp's two forms that gemma4's experts
// beside a dense FFN use against a float64 RMS norm: the dense output
// normed in place (src and dst one buffer, stored) and the experts' sum
// normed and added to it; the step's last token is left alone.
func TestNormInto(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(9))
	const ntok, n, stride, eps = 4, 300, 320, 1e-6
	for _, inPlace := range []bool{true, false} {
		t.Run(fmt.Sprintf("inPlace%v", inPlace), func(t *testing.T) {
			src, dst0, w := randomVec(ntok*stride, rng), randomVec(ntok*stride, rng), randomVec(n, rng)
			sb, wb := deviceFloats(t, d, "src", src), deviceFloats(t, d, "norm", w)
			db := sb
			if !inPlace {
				db = deviceFloats(t, d, "dst", dst0)
			}
			step := stepBuffer(t, d, ntok-1, 0, nil)
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return d.normInto(r, "norm", sb, wb, db, step, n, stride, eps, 1, !inPlace, ntok)
			})
			got := bytesF32(readBack(t, db, ntok*stride))
			before := dst0
			if inPlace {
				before = src
			}
			for tk := 0; tk < ntok; tk++ {
				ss := 0.0
				for i := 0; i < n; i++ {
					v := float64(src[tk*stride+i])
					ss += v * v
				}
				rs := 1 / math.Sqrt(ss/n+eps)
				for i := 0; i < stride; i++ {
					want := float64(before[tk*stride+i])
					if tk < ntok-1 && i < n {
						v := float64(src[tk*stride+i]) * rs * float64(w[i])
						if inPlace {
							want = v
						} else {
							want += v
						}
					}
					if g := float64(got[tk*stride+i]); math.Abs(g-want) > 1e-5*math.Max(1, math.Abs(want)) {
						t.Fatalf("token %d [%d]: %g, want %g", tk, i, g, want)
					}
				}
			}
		})
	}
}

type moeCase struct {
	typ              ggml.Type
	experts, k       int
	rows, cols       int // per expert
	ntok             int
	norm, pair, down bool // down: x per pair (MOE 2), else per token
	splitK           bool // the plan must split K
	bias             bool // per-expert bias rows (gpt-oss), the pair's expert's added (BIAS)
	oai              bool // gpt-oss's clamped SwiGLU (ACT 2)
}

// TestMoEMatvec runs expert mat-vecs (matvec.comp's MOE, and
// matvec_sg.comp's under the GPU layout) with random expert ids, repeats
// included, against quant.MatVec on each pair's expert's rows: gate/up
// paired with the norm fused (x per token), down (x per pair), one token
// and a batch, and a K long enough to be split into chunks.
func TestMoEMatvec(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(11))
	cases := []moeCase{
		{typ: ggml.F32, experts: 8, k: 2, rows: 24, cols: 256, ntok: 1, norm: true, pair: true},
		{typ: ggml.F32, experts: 8, k: 2, rows: 256, cols: 64, ntok: 5, down: true},
		{typ: ggml.Q8_0, experts: 6, k: 3, rows: 40, cols: 512, ntok: 4, norm: true, pair: true},
		{typ: ggml.Q8_0, experts: 6, k: 3, rows: 36, cols: 64, ntok: 1, down: true},
		{typ: ggml.Q4_K, experts: 4, k: 2, rows: 16, cols: 512, ntok: 3, norm: true, pair: true},
		{typ: ggml.Q4_0, experts: 4, k: 2, rows: 8, cols: 11264, ntok: 2, norm: true, pair: true, splitK: true},
		{typ: ggml.MXFP4, experts: 8, k: 2, rows: 64, cols: 256, ntok: 3, norm: true, pair: true},
		{typ: ggml.MXFP4, experts: 8, k: 2, rows: 256, cols: 64, ntok: 2, down: true},
		// gpt-oss: per-expert biases, the clamped SwiGLU
		{typ: ggml.MXFP4, experts: 8, k: 4, rows: 64, cols: 256, ntok: 3, norm: true, pair: true, bias: true, oai: true},
		{typ: ggml.MXFP4, experts: 8, k: 4, rows: 128, cols: 64, ntok: 2, down: true, bias: true},
		{typ: ggml.F32, experts: 8, k: 2, rows: 24, cols: 256, ntok: 2, norm: true, pair: true, bias: true, oai: true},
		{typ: ggml.Q4_0, experts: 4, k: 2, rows: 8, cols: 11264, ntok: 2, norm: true, pair: true, splitK: true, bias: true, oai: true},
	}
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuTuning}} {
		for _, c := range cases {
			if tu.name == "gpu" && (c.splitK || c.typ == ggml.Q4_K) {
				continue // K is never split there; spare lavapipe a K-quant compile
			}
			t.Run(fmt.Sprintf("%s/%s/E%dk%d/%dx%d/tok%d/norm%v/pair%v/down%v/bias%v/oai%v", tu.name, c.typ, c.experts, c.k, c.rows, c.cols, c.ntok, c.norm, c.pair, c.down, c.bias, c.oai), func(t *testing.T) {
				withTuning(t, d, tu.t)
				if c.splitK {
					units := c.cols / int(c.typ.BlockElems())
					if pl := d.plan(c.typ, units, 1, c.pair); pl.chunks < 2 {
						t.Fatalf("plan %+v does not split K", pl)
					}
				}
				checkMoEMatvec(t, d, c, rng)
			})
		}
	}
}

func checkMoEMatvec(t *testing.T, d *gpu, c moeCase, rng *rand.Rand) {
	t.Helper()
	s := c.shape()
	w, w2, m, m2 := s.banks(t, d, rng)
	pairs := c.ntok * c.k
	ids := make([]uint32, pairs)
	for i := range ids {
		ids[i] = uint32(rng.Intn(c.experts))
	}
	ids[pairs-1] = uint32(c.experts - 1) // the last expert's rows, at the end of the bank
	idb, _ := d.NewBuffer("ids", uint64(4*pairs), vulkan.MemDevice)
	raw := make([]byte, 4*pairs)
	for i, id := range ids {
		binary.LittleEndian.PutUint32(raw[4*i:], id)
	}
	idb.Write(0, raw)

	xrows := c.ntok
	if c.down {
		xrows = pairs
	}
	x, xstride, xb, nw, nwb := s.inputs(t, d, xrows, rng)
	ystride := c.rows + 10
	y0 := make([]float32, pairs*ystride)
	for i := range y0 {
		y0[i] = sentinel
	}
	yb := deviceFloats(t, d, "y", y0)
	y2b := deviceFloats(t, d, "y2", y0)
	step := stepBuffer(t, d, c.ntok, 0, nil)
	op := matvecOp{label: "experts", m: m, m2: m2, x: xb, xstride: xstride, norm: nwb, eps: 1e-5, y: yb, y2: y2b, ystride: ystride, yoff: 5, tokens: c.ntok, step: step,
		moe: moeRows{ids: idb, k: c.k, experts: c.experts, perPair: c.down}}
	bias, bias2 := s.epilogue(t, d, &op, rng)
	runOnce(t, d, func(r *vulkan.Recorder) error { return d.matvec(r, op) })
	got := bytesF32(readBack(t, yb, len(y0)))

	ref, res := s.refs(t, ids[:pairs], x, xstride, nw, w, w2, bias, bias2, got, ystride)
	if nmse(ref, make([]float32, len(ref))) == 0 {
		t.Fatal("the reference is all zeros")
	}
	if e := nmse(ref, res); e > matvecNMSE {
		t.Errorf("NMSE %.3g (bound %.0e)", e, matvecNMSE)
	} else {
		t.Logf("NMSE %.3g", e)
	}
}

// TestMatvecMXFP4 checks the MXFP4 mat-vec (types/mxfp4.glsl: gpt-oss's
// and qwen3moe MXFP4_MOE's expert banks) as a dense one, as TestMatvecTypes
// does the other types, under both layouts; TestMoEMatvec runs it as
// expert banks.
func TestMatvecMXFP4(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(39))
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuTuning}} {
		for _, c := range []mvCase{
			{typ: ggml.MXFP4, rows: 37, cols: 768, ntok: 1},
			{typ: ggml.MXFP4, rows: 53, cols: 512, ntok: 11, epi: epiResidual},
			{typ: ggml.MXFP4, rows: 19, cols: 256, ntok: 3, norm: true, pair: true},
		} {
			t.Run(fmt.Sprintf("%s/%dx%d/tok%d/norm%v/pair%v/epi%d", tu.name, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi), func(t *testing.T) {
				withTuning(t, d, tu.t)
				checkMatvec(t, d, c, rng)
			})
		}
	}
}

// TestMoEMatchesCPU runs synth-qwen3moe on both backends, prefill as one
// batch and token by token, then decode steps: F32 (router, experts and the
// rest) under the CPU device layout and the GPU one (shared-x expert
// mat-vecs), and MXFP4_MOE (MXFP4 banks, Q8_0 elsewhere). The per-op tests
// check each kernel, this the wiring (the router's norm, the pairs'
// strides, the residual). Bounds as TestArchsMatchCPU's for F32 and Q8_0.
func TestMoEMatchesCPU(t *testing.T) {
	matchCPU(t, "qwen3moe", []matchCase{
		{"F32", "F32", "cpu", true}, {"F32", "F32", "cpu", false}, {"F32", "F32", "gpu", true}, {"F32", "F32", "gpu", false},
		{"MXFP4_MOE", "Q8_0", "cpu", true},
	})
}

// matchCase is one file (synth-<arch>-<file>) run on both backends under a
// device layout, prompt as a batch or token by token; bound names the
// archNMSE entry.
type matchCase struct {
	file, bound string
	tune        string
	prefill     bool
}

func matchCPU(t *testing.T, arch string, cases []matchCase) {
	d := testDevice(t)
	prompt := make([]int32, 21)
	for i := range prompt {
		prompt[i] = int32(1 + (i*37)%500)
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/prefill%v", c.file, c.tune, c.prefill), func(t *testing.T) {
			tu := cpuTuning
			if c.tune == "gpu" {
				tu = gpuTuning
			}
			withTuning(t, d, tu)
			p := testenv.Model(t, "2026/synth-"+arch+"-"+c.file+".gguf")
			e := compareLogits(t, p, prompt, 8, backend.KVF16, c.prefill)
			if bound := archNMSE[c.bound]; e > bound {
				t.Errorf("logits NMSE %.3g over %.0e", e, bound)
			} else {
				t.Logf("worst logits NMSE %.3g", e)
			}
		})
	}
}

// TestGptOssMatchesCPU runs synth-gpt-oss on both backends as
// TestMoEMatchesCPU does synth-qwen3moe: sinks, YaRN, the output bias,
// expert biases, the clamped SwiGLU and the even layers' windows wired
// together, under the CPU device layout (ordered attention) and the GPU one
// (shared-x mat-vecs; decode attention split over positions, the sink
// folded in by the merge of the splits).
func TestGptOssMatchesCPU(t *testing.T) {
	matchCPU(t, "gpt-oss", []matchCase{
		{"F32", "F32", "cpu", true}, {"F32", "F32", "gpu", true}, {"F32", "F32", "gpu", false},
		{"MXFP4_MOE", "Q8_0", "cpu", true},
	})
}

// The routing the Vulkan backend reports for the last token of a step (a
// prefill batch, then a decode step) is the CPU backend's: the same
// experts in the same order, weights within 1e-3 (the two backends sum in
// different orders, and these random models amplify it layer by layer).
// The deepseek2 file runs again under DeepSeek-V2's softmax gating
// (expert_gating_func 1) with its groups, bias, renormalisation and scale.
func TestLastRoutingMatchesCPU(t *testing.T) {
	prompt := []int32{1, 400, 37, 291, 5, 88, 406, 12}
	for _, file := range []string{"2026/synth-qwen3moe-F32", "2026/synth-gpt-oss-F32", "2026b/synth-deepseek2-F32", "2026b/synth-deepseek2-F32/softmax"} {
		t.Run(file, func(t *testing.T) {
			file, softmax := strings.CutSuffix(file, "/softmax")
			m := loadModel(t, testenv.Model(t, file+".gguf"))
			if softmax {
				if m.MoE.Gating != arch.GatingSigmoid || m.MoE.Groups < 2 {
					t.Fatalf("the deepseek2 file's rule is %s: want sigmoid within groups to swap for softmax", m.MoE.Rule())
				}
				m.MoE.Gating = arch.GatingSoftmax
			}
			opts := backend.Options{ContextSize: 64, KVType: backend.KVF16, Device: -1}
			vb := newVulkan(t, m, opts)
			cb, err := cpuFor(t, m, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cb.Close()
			ctx := context.Background()
			for step, toks := range [][]int32{prompt, {77}} {
				pos := 0
				if step > 0 {
					pos = len(prompt)
				}
				if _, err := cb.Forward(ctx, toks, pos, false); err != nil {
					t.Fatal(err)
				}
				if _, err := vb.Forward(ctx, toks, pos, false); err != nil {
					t.Fatal(err)
				}
				want, got := cb.LastRouting(), vb.(backend.RoutingBackend).LastRouting()
				if len(got) != len(want) {
					t.Fatalf("step %d: %d layers reported, want %d", step, len(got), len(want))
				}
				for l := range want {
					if !slices.Equal(got[l].Experts, want[l].Experts) {
						t.Errorf("step %d layer %d: experts %v, CPU %v", step, l, got[l].Experts, want[l].Experts)
					}
					for j := range want[l].Weights {
						if d := math.Abs(float64(got[l].Weights[j] - want[l].Weights[j])); d > 1e-3 {
							t.Errorf("step %d layer %d slot %d: weight %g, CPU %g", step, l, j, got[l].Weights[j], want[l].Weights[j])
						}
					}
				}
			}
		})
	}
}

// pairShape is what an expert product test's banks, inputs and reference
// need of its case (moeCase for the per-pair mat-vec, groupCase for the
// grouped product).
type pairShape struct {
	typ                         ggml.Type
	experts, k, rows, cols      int
	down, norm, pair, bias, oai bool
}

func (c moeCase) shape() pairShape {
	return pairShape{c.typ, c.experts, c.k, c.rows, c.cols, c.down, c.norm, c.pair, c.bias, c.oai}
}

func (c groupCase) shape() pairShape {
	return pairShape{c.typ, c.experts, c.k, c.rows, c.cols, c.down, c.norm, c.pair, c.bias, c.oai}
}

// banks makes random expert banks (experts × rows rows of cols) and
// uploads them: the gate bank, and the up bank for a pair.
func (s pairShape) banks(t *testing.T, d *gpu, rng *rand.Rand) (w, w2 []byte, m, m2 *Matrix) {
	t.Helper()
	bankRows := s.experts * s.rows
	w = randomWeights(t, s.typ, bankRows, s.cols, rng)
	m, err := d.uploadMatrix("bank", s.typ, bankRows, s.cols, w)
	if err != nil {
		t.Fatal(err)
	}
	if s.pair {
		w2 = randomWeights(t, s.typ, bankRows, s.cols, rng)
		if m2, err = d.uploadMatrix("bank2", s.typ, bankRows, s.cols, w2); err != nil {
			t.Fatal(err)
		}
	}
	return w, w2, m, m2
}

// inputs makes xrows random rows of x at the type's stride, and a norm
// weight (uploaded where the case norms x) zero past cols.
func (s pairShape) inputs(t *testing.T, d *gpu, xrows int, rng *rand.Rand) (x []float32, xstride int, xb *vulkan.Buffer, nw []float32, nwb *vulkan.Buffer) {
	t.Helper()
	l := layouts[s.typ]
	xstride = l.unitsPerRow(s.cols) * l.unit
	x = make([]float32, xrows*xstride)
	for r := 0; r < xrows; r++ {
		copy(x[r*xstride:], randomVec(s.cols, rng))
	}
	xb = deviceFloats(t, d, "x", x)
	nw = randomVec(xstride, rng)
	for i := s.cols; i < xstride; i++ {
		nw[i] = 0
	}
	if s.norm {
		nwb = deviceFloats(t, d, "nw", nw)
	}
	return x, xstride, xb, nw, nwb
}

// epilogue draws per-expert bias rows ([experts][rows], as the model
// stores them) and sets op's biases and activation as the case asks.
func (s pairShape) epilogue(t *testing.T, d *gpu, op *matvecOp, rng *rand.Rand) (bias, bias2 []float32) {
	t.Helper()
	bankRows := s.experts * s.rows
	bias, bias2 = randomVec(bankRows, rng), randomVec(bankRows, rng)
	if s.bias {
		op.rbias = deviceFloats(t, d, "bias", bias)
		if s.pair {
			op.rbias2 = deviceFloats(t, d, "bias2", bias2)
		}
	}
	if s.oai {
		op.act = 2
	}
	return bias, bias2
}

// refs computes each pair's rows on the CPU (quant.MatVec on its expert's
// rows, after the norm, with the biases and activation the case asks for)
// and returns them with the device's rows from got (ystride words a pair,
// the rows at offset 5 between sentinels, which must be intact).
func (s pairShape) refs(t *testing.T, ids []uint32, x []float32, xstride int, nw []float32, w, w2 []byte, bias, bias2, got []float32, ystride int) (ref, res []float32) {
	t.Helper()
	rowBytes, _ := s.typ.RowBytes(uint64(s.cols))
	for p := range ids {
		xr := p / s.k
		if s.down {
			xr = p
		}
		xt := x[xr*xstride : xr*xstride+s.cols]
		if s.norm {
			xn := slices.Clone(xt)
			refNorm(xn, nw[:s.cols], 1e-5)
			xt = xn
		}
		e := uint64(ids[p])
		bank := func(w []byte) quant.Matrix {
			return quant.Matrix{Type: s.typ, Rows: s.rows, Cols: s.cols, Data: w[e*uint64(s.rows)*rowBytes : (e+1)*uint64(s.rows)*rowBytes]}
		}
		gv, uv := make([]float32, s.rows), make([]float32, s.rows)
		quant.MatVec(gv, bank(w), xt)
		if s.pair {
			quant.MatVec(uv, bank(w2), xt)
		}
		for r := 0; r < s.rows; r++ {
			v, u := gv[r], uv[r]
			if s.bias {
				v += bias[int(e)*s.rows+r]
				u += bias2[int(e)*s.rows+r]
			}
			switch {
			case s.pair && s.oai:
				v = refSwigluOAI(v, u)
			case s.pair:
				v = float32(float64(v)/(1+math.Exp(-float64(v)))) * u
			}
			ref = append(ref, v)
			res = append(res, got[p*ystride+5+r])
		}
		for i := 0; i < 5; i++ {
			if !isSentinel(got[p*ystride+i]) || !isSentinel(got[p*ystride+5+s.rows+i]) {
				t.Fatalf("pair %d: a sentinel beside its rows was overwritten", p)
			}
		}
	}
	return ref, res
}

// uint32Floats is v's bits as floats, for a buffer of ids uploaded as
// deviceFloats uploads floats.
func uint32Floats(v []uint32) []float32 {
	f := make([]float32, len(v))
	for i, u := range v {
		f[i] = math.Float32frombits(u)
	}
	return f
}
