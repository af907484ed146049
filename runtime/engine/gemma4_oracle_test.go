package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// Gemma 4's noise floor (issue 26). synth-gemma4-F32 is rebuilt here from
// the GGUF alone, as llama.cpp's gemma4.cpp builds its graph and as
// ggml-cpu on x86 with AVX2 rounds it: F32 products in tinyBLAS's order
// for the prompt batch (one 8-lane FMA accumulator per output, then its
// hsum) and ggml_vec_dot_f32's for single tokens (four 8-lane
// accumulators, GGML_F32x8_REDUCE); RMS norms summed in float64, scaled in
// float32; K and V stored as F16, Q rounded to F16, scores by
// ggml_vec_dot_f16, the one-chunk flash attention's F16 value accumulator
// and S = fma(S, ms, vs); GELU through the F16 table; RoPE's x0·c − x1·s
// and x0·s + x1·c with the first product fused, as GCC contracts them;
// every element-wise step rounded to float32 (products that meet an add
// are converted explicitly, which the Go spec says stops fusion). It
// shares no code with either backend.
//
// At position 0, where RoPE is the identity and attention returns V, it
// matches llama.cpp's dump to 1.1e-6 (the dump's precision), so the graph
// and every rounding point on that path are llama.cpp's. At position 1 it
// is 3.2e-4 off, and moving one attention score by one float32 ulp (layer
// 0 head 1, or layer 3 head 0 or 3) brings it to 1.0e-6: llama.cpp sums
// some score in an order this rebuild does not reproduce (ggml's AVX2
// order, an exact sum, a sequential one, AVX-512's and tinyBLAS's all
// miss position 1, and each gives a different 0.8e-2 to 2.3e-2 prompt
// maximum). Over the whole reference it is 1.7e-2 off at prompt positions
// and 2.6e-2 at generated ones — better than either backend, not within
// the 0.01.
//
// Why no implementation can do better without llama.cpp's exact order:
// Gemma 4 attends with scale 1, so scores reach ~20 and one float32 ulp of
// a score (2e-6) changes its softmax weight by 2e-6 relative, ~16 ulps of
// the attention output; from there F16 rounding flips (the K cache, the
// GELU table) carry it on. TestGemma4NoiseFloor measures it: moving about
// half of all attention scores by one ulp moves this rebuild's logits by
// 1.4e-2 to 2.5e-2 at prompt positions and 2.6e-2 to 5.9e-2 at generated
// ones (six seeds) — the size of both backends' gaps (F32: CPU 5.5e-2 /
// 4.1e-2, Vulkan 4.5e-2 / 5.8e-2). The two llama.cpp builds that differ by
// 7.4e-3 were compared on the other synth models, whose 1/√d attention
// scale keeps scores small.
//
// The CPU backend now reproduces llama.cpp's prompt positions on this file
// to the dump's printed digits (the gemma4 rows of arch2026_reference_test.go:
// ggml's RMS norm rounding, tinyBLAS's product order, RoPE and the GELU
// table contracted as GCC compiles them): the misses described here are
// this rebuild's own, and the sensitivity TestGemma4NoiseFloor measures
// is why each of those details shows.
type gemma4Oracle struct {
	f       *gguf.File
	w       map[string][]float32
	nBatch  int           // positions below are the prompt batch (tinyBLAS order)
	k, v    [][][]float32 // per layer, per position: the F16-rounded cache row
	noise   uint64        // nonzero: seeds ±1-ulp moves of about half the scores
	pos     int
	swa     []bool
	nShared int
}

func newGemma4Oracle(t *testing.T, path string, nBatch int) *gemma4Oracle {
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	o := &gemma4Oracle{f: f, w: map[string][]float32{}, nBatch: nBatch, k: make([][][]float32, 6), v: make([][][]float32, 6)}
	v, _ := f.Get("gemma4.attention.sliding_window_pattern")
	o.swa = v.(gguf.Array).Values.([]bool)
	return o
}

func (o *gemma4Oracle) tensor(name string) []float32 {
	if w, ok := o.w[name]; ok {
		return w
	}
	tt, ok := o.f.Tensor(name)
	if !ok || tt.Type != 0 {
		panic("gemma4 oracle: no F32 tensor " + name)
	}
	d := o.f.TensorData(tt)
	w := make([]float32, len(d)/4)
	for i := range w {
		w[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
	}
	o.w[name] = w
	return w
}

// fmaF32 is a*b+c rounded once (the float64 sum is exact unless its
// exponents are far apart, where the double rounding cannot matter here).
func fmaF32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

func to16(x float32) float32 { return quant.FP16ToFP32(quant.FP32ToFP16(x)) }

// dotReduce is ggml_vec_dot_f32 (and _f16, whose products are exact) on
// AVX2: four 8-lane FMA accumulators, then GGML_F32x8_REDUCE.
func dotReduce(a, b []float32) float32 {
	var acc [4][8]float32
	for i := 0; i+32 <= len(a); i += 32 {
		for j := range acc {
			for l := range acc[j] {
				acc[j][l] = fmaF32(a[i+8*j+l], b[i+8*j+l], acc[j][l])
			}
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	s := ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]))
	for i := len(a) &^ 31; i < len(a); i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

// dotTiny is tinyBLAS's order on AVX2: one 8-lane FMA accumulator, hsum.
func dotTiny(a, b []float32) float32 {
	var acc [8]float32
	for i := 0; i+8 <= len(a); i += 8 {
		for l := range acc {
			acc[l] = fmaF32(a[i+l], b[i+l], acc[l])
		}
	}
	return ((acc[4] + acc[0]) + (acc[6] + acc[2])) + ((acc[5] + acc[1]) + (acc[7] + acc[3]))
}

func (o *gemma4Oracle) matvec(name string, x []float32) []float32 {
	w := o.tensor(name)
	cols := len(x)
	out := make([]float32, len(w)/cols)
	for r := range out {
		if o.pos < o.nBatch {
			out[r] = dotTiny(w[r*cols:(r+1)*cols], x)
		} else {
			out[r] = dotReduce(w[r*cols:(r+1)*cols], x)
		}
	}
	return out
}

// rmsNorm is ggml_rms_norm (float64 sum of float32 squares) times w.
func rmsNorm(x, w []float32) []float32 {
	s := 0.0
	for _, v := range x {
		s += float64(v * v)
	}
	mean := float32(s / float64(len(x)))
	sc := 1 / float32(math.Sqrt(float64(mean+1e-6)))
	out := make([]float32, len(x))
	for i := range x {
		out[i] = x[i] * sc
		if w != nil {
			out[i] *= w[i]
		}
	}
	return out
}

// gelu16 is ggml's GELU table: F16 index, F16 value.
func gelu16(x float32) float32 {
	if x <= -10 {
		return 0
	}
	if x >= 10 {
		return x
	}
	h := float64(to16(x))
	return to16(float32(0.5 * h * (1 + math.Tanh(math.Sqrt(2/math.Pi)*h*(1+0.044715*h*h)))))
}

// rope rotates NeoX pairs (i, i+n/2) by ggml's float32 angles.
func rope(x []float32, pos, n int, base float32, ff []float32) {
	step := float32(math.Pow(float64(base), float64(float32(-2)/float32(n))))
	theta := float32(pos)
	for i := 0; i < n/2; i++ {
		th := theta
		if ff != nil {
			th /= ff[i]
		}
		c, s := float32(math.Cos(float64(th))), float32(math.Sin(float64(th)))
		a, b := x[i], x[i+n/2]
		x[i] = fmaF32(a, c, -(b * s))
		x[i+n/2] = fmaF32(a, s, b*c)
		theta *= step
	}
}

// attend is the one-chunk flash attention of one query head over cache
// rows lo..pos of layer src, KV head kh.
func (o *gemma4Oracle) attend(q []float32, src, kh, hd, lo int) []float32 {
	q16 := make([]float32, hd)
	for i := range q16 {
		q16[i] = to16(q[i])
	}
	acc := make([]float32, hd)
	m, sum := float32(math.Inf(-1)), float32(0)
	for p := lo; p <= o.pos; p++ {
		s := dotReduce(o.k[src][p][kh*hd:(kh+1)*hd], q16)
		if o.noise != 0 {
			o.noise = o.noise*6364136223846793005 + 1442695040888963407
			switch o.noise >> 62 {
			case 0:
				s = math.Nextafter32(s, float32(math.Inf(1)))
			case 1:
				s = math.Nextafter32(s, float32(math.Inf(-1)))
			}
		}
		ms, vs := float32(1), float32(1)
		if s > m {
			ms = float32(math.Exp(float64(m - s)))
			m = s
			for i := range acc {
				acc[i] = to16(acc[i] * ms)
			}
		} else {
			vs = float32(math.Exp(float64(s - m)))
		}
		v := o.v[src][p][kh*hd : (kh+1)*hd]
		for i := range acc {
			acc[i] = to16(fmaF32(v[i], vs, acc[i]))
		}
		sum = fmaF32(sum, ms, vs)
	}
	inv := 1 / sum
	for i := range acc {
		acc[i] *= inv
	}
	return acc
}

// forward returns the logits after token tok at position pos (positions
// in order from 0).
func (o *gemma4Oracle) forward(tok int32, pos int) []float32 {
	const embd, layers, ple, heads, kvHeads, shared, window = 256, 6, 32, 4, 2, 2, 8
	o.pos = pos
	x := make([]float32, embd)
	copy(x, o.tensor("token_embd.weight")[int(tok)*embd:])
	for i := range x {
		x[i] *= 16 // √embd
	}
	// per-layer inputs: (rms(proj·x/√embd)·norm + table·√P) / √2
	proj := o.matvec("per_layer_model_proj.weight", x)
	table := o.tensor("per_layer_token_embd.weight")[int(tok)*ple*layers:]
	inp := make([][]float32, layers)
	for l := range inp {
		seg := make([]float32, ple)
		for i := range seg {
			seg[i] = proj[l*ple+i] / 16
		}
		seg = rmsNorm(seg, o.tensor("per_layer_proj_norm.weight"))
		for i := range seg {
			seg[i] = (seg[i] + float32(table[l*ple+i]*float32(math.Sqrt(ple)))) * (1 / float32(math.Sqrt2))
		}
		inp[l] = seg
	}
	for l := 0; l < layers; l++ {
		w := func(n string) []float32 { return o.tensor(fmt.Sprintf("blk.%d.%s.weight", l, n)) }
		mv := func(n string, in []float32) []float32 { return o.matvec(fmt.Sprintf("blk.%d.%s.weight", l, n), in) }
		hd, base, lo := 128, float32(1e6), 0
		ff := o.tensor("rope_freqs.weight")
		if o.swa[l] {
			hd, base, ff, lo = 64, 1e4, nil, max(0, pos-window+1)
		}
		cur := rmsNorm(x, w("attn_norm"))
		q := mv("attn_q", cur)
		for h := 0; h < heads; h++ {
			copy(q[h*hd:], rmsNorm(q[h*hd:(h+1)*hd], w("attn_q_norm")))
			rope(q[h*hd:(h+1)*hd], pos, hd, base, ff)
		}
		src := l // KV-shared layers read the last earlier layer of their kind
		if l >= layers-shared {
			for src = layers - shared - 1; o.swa[src] != o.swa[l]; src-- {
			}
		} else {
			k, v := mv("attn_k", cur), mv("attn_v", cur)
			for h := 0; h < kvHeads; h++ {
				copy(k[h*hd:], rmsNorm(k[h*hd:(h+1)*hd], w("attn_k_norm")))
				rope(k[h*hd:(h+1)*hd], pos, hd, base, ff)
				copy(v[h*hd:], rmsNorm(v[h*hd:(h+1)*hd], nil))
			}
			for i := range k {
				k[i], v[i] = to16(k[i]), to16(v[i])
			}
			o.k[l], o.v[l] = append(o.k[l], k), append(o.v[l], v)
		}
		att := make([]float32, 0, heads*hd)
		for h := 0; h < heads; h++ {
			att = append(att, o.attend(q[h*hd:(h+1)*hd], src, h/(heads/kvHeads), hd, lo)...)
		}
		a := rmsNorm(mv("attn_output", att), w("post_attention_norm"))
		for i := range x {
			x[i] += a[i]
		}
		cur = rmsNorm(x, w("ffn_norm"))
		gate, up := mv("ffn_gate", cur), mv("ffn_up", cur)
		for i := range gate {
			gate[i] = gelu16(gate[i]) * up[i]
		}
		d := rmsNorm(mv("ffn_down", gate), w("post_ffw_norm"))
		for i := range x {
			x[i] += d[i]
		}
		g := mv("inp_gate", x)
		for i := range g {
			g[i] = gelu16(g[i]) * inp[l][i]
		}
		p := rmsNorm(mv("proj", g), w("post_norm"))
		scale := w("layer_output_scale")[0]
		for i := range x {
			x[i] = (x[i] + p[i]) * scale
		}
	}
	logits := o.matvec("token_embd.weight", rmsNorm(x, o.tensor("output_norm.weight")))
	for i, v := range logits {
		logits[i] = float32(math.Tanh(float64(v*(1/float32(15))))) * 15
	}
	return logits
}

// gemma4OracleRun returns the oracle's logits after every position of the
// reference's prompt and greedy tokens.
func gemma4OracleRun(t *testing.T, r reference, noise uint64) [][]float32 {
	o := newGemma4Oracle(t, testenv.Model(t, "2026/synth-gemma4-F32.gguf"), len(r.PromptTokens))
	o.noise = noise
	var out [][]float32
	for p, tok := range append(append([]int32(nil), r.PromptTokens...), r.Greedy...) {
		out = append(out, o.forward(tok, p))
	}
	return out
}

// maxDelta is the largest |a−b| over the reference's top-5 tokens, at
// prompt positions and at generated ones.
func maxDelta(r reference, a, b func(p, tok int) float64) (prompt, gen float64) {
	for p := range r.Steps {
		for _, e := range r.Steps[p].Top[:5] {
			d := math.Abs(a(p, int(e[0])) - b(p, int(e[0])))
			if p < len(r.PromptTokens) {
				prompt = math.Max(prompt, d)
			} else {
				gen = math.Max(gen, d)
			}
		}
	}
	return prompt, gen
}

// TestGemma4OracleMatchesLlamaCpp: the rebuild is llama.cpp's graph with
// ggml's rounding — exact at position 0, and within the gemma4 rows'
// bounds everywhere (it measures 1.7e-2 / 2.6e-2).
func TestGemma4OracleMatchesLlamaCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds 45 positions in Go")
	}
	r := loadReference(t, "2026/synth-gemma4-F32.json")
	got := gemma4OracleRun(t, r, 0)
	ref := func(p, tok int) float64 {
		for _, e := range r.Steps[p].Top {
			if int(e[0]) == tok {
				return e[1]
			}
		}
		panic("not in the reference's top 10")
	}
	oracle := func(p, tok int) float64 { return float64(got[p][tok]) }
	for _, e := range r.Steps[0].Top[:5] {
		if d := math.Abs(float64(got[0][int(e[0])]) - e[1]); d > 1e-5 {
			t.Errorf("position 0, token %d: %.6f, llama.cpp %.6f (|Δ| %.2g > 1e-5)", int(e[0]), got[0][int(e[0])], e[1], d)
		}
	}
	prompt, gen := maxDelta(r, oracle, ref)
	t.Logf("oracle vs llama.cpp: max |Δlogit| prompt %.2e, generated %.2e", prompt, gen)
	if prompt > 0.03 || gen > 0.04 {
		t.Errorf("oracle vs llama.cpp: prompt %.2e, generated %.2e; want within 0.03 / 0.04", prompt, gen)
	}
}

// TestGemma4NoiseFloor: one float32 ulp in the attention scores — the
// smallest difference of summation order — moves the logits by more than
// the 0.01 at prompt positions. Any implementation that does not
// sum every score exactly as llama.cpp's build did sits this far off.
func TestGemma4NoiseFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds 45 positions in Go, three times")
	}
	r := loadReference(t, "2026/synth-gemma4-F32.json")
	base := gemma4OracleRun(t, r, 0)
	worst := 0.0
	for seed := uint64(1); seed <= 2; seed++ {
		moved := gemma4OracleRun(t, r, seed)
		prompt, gen := maxDelta(r, func(p, tok int) float64 { return float64(moved[p][tok]) },
			func(p, tok int) float64 { return float64(base[p][tok]) })
		t.Logf("scores moved by ±1 ulp (seed %d): logits move by prompt %.2e, generated %.2e", seed, prompt, gen)
		worst = math.Max(worst, prompt)
	}
	if worst <= 0.01 {
		t.Errorf("one-ulp score moves change prompt logits by at most %.2e; then the 0.01 target is above the noise floor and the gemma4 gap needs another explanation", worst)
	}
}
