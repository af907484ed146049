package cpu

import (
	"context"
	"math"
	"testing"

	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"
)

// A batch routes its tokens to experts and runs each expert once over the
// tokens routed to it; the logits must equal running the same tokens one
// at a time, bit for bit (each token's outputs are summed in slot order
// either way), for F32 and quantized experts. One at a time, the experts'
// matrices come from the resident table, or from the pack cache on every
// token, or from a cache too small for them, which evicts and so drops the
// table: the same bits each way.
func TestMoEBatchMatchesSteps(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.F32, ggml.Q4_0, ggml.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			s := synth.Shapes["tiny"]
			s.FF, s.Experts, s.ExpertsUsed, s.ExpertFF = 256, 8, 3, 256
			if typ == ggml.Q4_K {
				s.Embd, s.HeadDim = 256, 64
			}
			m := loadSynth(t, s, synth.Options{Arch: "qwen3moe", Type: typ, Seed: 3})
			tokens := []int32{1, 450, 4996, 17354, 1701, 29916, 432, 1274, 975, 278, 17366, 11203}
			run := func(batch int, cache string) []float32 {
				b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				switch cache {
				case "per token":
					b.experts.resident = nil
				case "evicting":
					b.expertPacks.Free()
					b.expertPacks = quant.NewPackCache(m.ExpertBytes() / 8)
				}
				defer func() {
					if cache == "evicting" && b.expertPacks.Bytes() > 0 && (b.experts.resident != nil || b.expertPacks.Evictions() == 0) {
						t.Errorf("a cache of an eighth of the experts: %d evictions, resident table kept: %v", b.expertPacks.Evictions(), b.experts.resident != nil)
					}
				}()
				var last []float32
				for i := 0; i < len(tokens); i += batch {
					last, err = b.Forward(context.Background(), tokens[i:min(i+batch, len(tokens))], i, false)
					if err != nil {
						t.Fatal(err)
					}
				}
				return last
			}
			whole := run(len(tokens), "resident")
			for _, cache := range []string{"resident", "per token", "evicting"} {
				steps := run(1, cache)
				for i := range whole {
					if math.Float32bits(whole[i]) != math.Float32bits(steps[i]) {
						t.Fatalf("logit %d: batch %v, one at a time (%s) %v", i, whole[i], cache, steps[i])
					}
				}
			}
		})
	}
}

// swigluOAI clamps the gate from above and up from both sides at 7, then
// gate·σ(1.702·gate)·(up+1), against float64.
func TestSwigluOAI(t *testing.T) {
	ref := func(g, u float64) float64 {
		g, u = math.Min(g, 7), math.Max(-7, math.Min(u, 7))
		return g / (1 + math.Exp(-1.702*g)) * (u + 1)
	}
	for _, c := range [][2]float32{{0.5, 0.25}, {-3, 2}, {10, 1}, {2, -9}, {8, 8}, {-20, 3}, {0, -1}} {
		got, want := swigluOAI(c[0], c[1]), ref(float64(c[0]), float64(c[1]))
		if math.Abs(float64(got)-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Errorf("swigluOAI(%g, %g) = %g, want %g", c[0], c[1], got, want)
		}
	}
}

// A sink joins the softmax's denominator with no value: the output is the
// plain attention output times Σe^s / (Σe^s + e^sink), whether the sink is
// below or above every score.
func TestAttendSink(t *testing.T) {
	const hd, span = 8, 5
	q := make([]float32, hd)
	keys, vals := make([]float32, span*hd), make([]float32, span*hd)
	for i := range q {
		q[i] = float32(math.Sin(float64(i) + 0.5))
	}
	for i := range keys {
		keys[i] = float32(math.Cos(float64(i) * 0.7))
		vals[i] = float32(math.Sin(float64(i) * 0.3))
	}
	const scale = 0.5
	for _, sink := range []float32{-2, 0.3, 6} {
		out := make([]float32, hd)
		attendPortable(q, keys, vals, out, span, scale, 0, sink, make([]float32, hd), false)
		w := make([]float64, span)
		den := math.Exp(float64(sink))
		for k := range w {
			var d float64
			for i := 0; i < hd; i++ {
				d += float64(q[i]) * float64(keys[k*hd+i])
			}
			w[k] = math.Exp(d * scale)
			den += w[k]
		}
		for i := 0; i < hd; i++ {
			var want float64
			for k := range w {
				want += w[k] / den * float64(vals[k*hd+i])
			}
			if math.Abs(float64(out[i])-want) > 1e-5 {
				t.Errorf("sink %g: out[%d] = %g, want %g", sink, i, out[i], want)
			}
		}
	}
}

// Gemma 4's experts beside a dense FFN (the router reading its own norm
// of the stream, per-expert output scales, the experts' post-norm added to
// the dense branch) take the same two paths: a batch must equal its
// tokens one at a time, bit for bit, in F32 and with quantized banks.
func TestMoEBesideDenseBatchMatchesSteps(t *testing.T) {
	for _, file := range []string{"2026b/synth-gemma4moe-F32.gguf", "2026b/synth-gemma4moe-Q4_K_M.gguf"} {
		t.Run(file, func(t *testing.T) {
			m := loadShared(t, file)
			tokens := []int32{1, 45, 496, 173, 170, 299, 43, 127, 97, 278, 173, 112}
			run := func(batch int) []float32 {
				b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				var last []float32
				for i := 0; i < len(tokens); i += batch {
					last, err = b.Forward(context.Background(), tokens[i:min(i+batch, len(tokens))], i, false)
					if err != nil {
						t.Fatal(err)
					}
				}
				return last
			}
			whole, steps := run(len(tokens)), run(1)
			for i := range whole {
				if math.Float32bits(whole[i]) != math.Float32bits(steps[i]) {
					t.Fatalf("logit %d: batch %v, one at a time %v", i, whole[i], steps[i])
				}
			}
		})
	}
}
