package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// kvQuantBound is the largest |Δlogit| against llama.cpp's run with the same
// cache types on backend be, from ../shared/docs/architectures-2026b.md
// ("Quantized KV cache", recommended bounds): q8_0 0.03 (qwen35 0.006),
// q4_0 0.1 (qwen35 0.05) — above llama.cpp's own noise, below what a cache
// left in f16 or quantized without the rotation misses by.
// The CPU backend meets the plain bounds on gemma3 (q8_0 0.016, q4_0
// 0.078) since it rounds norms, F32 products, RoPE, the GELU table and the
// Hadamard rotation as llama.cpp's AVX2 build does (0.053 and 0.162 before).
// Vulkan (lavapipe) meets them too since its F32 path rounds as the CPU
// backend's (RMS norms summed as ggml's, dense F32 products in
// tinyBLAS's order, the GELU table; before that its RoPE, scores and
// softmax): on gemma3 it gives the CPU backend's logits to the bit at
// every cache type (TestKVQuantBackendsAgree), q8_0 0.0102 and q4_0
// 0.0782 (0.0394 and 0.1584 before, held at 0.045 and 0.165 then), and is
// held just above those figures, so that a change of rounding on either
// side shows.
func kvQuantBound(model, be string, k backend.KVType) float64 {
	switch {
	case strings.Contains(model, "qwen35"):
		return map[backend.KVType]float64{backend.KVQ8_0: 0.006, backend.KVQ4_0: 0.05}[k]
	case strings.Contains(model, "gemma3") && be == "vulkan":
		return map[backend.KVType]float64{backend.KVQ8_0: 0.011, backend.KVQ4_0: 0.08}[k]
	}
	return map[backend.KVType]float64{backend.KVQ8_0: 0.03, backend.KVQ4_0: 0.1}[k]
}

// kvQuantOpen are the files where the bound is not reached yet on
// Vulkan (lavapipe): the measured worst, held as a guard, and why it is
// open. They are reported on the issue, not counted as met. None is now.
//
// gemma3 was (q4_0 0.158, q8_0 0.039), measured, not guessed: its prompt
// positions 0-3 matched llama.cpp within 7e-4 with either cache, and the
// first miss was a step, not a drift: at position 4 (q4_0) the F16
// rounding of a query block's Q8_0 scale sat one ulp from its tie, at
// position 5 (q8_0) a layer-0 GELU input seven ulps from its F16 table
// boundary; flipping just that one rounding brought the position back
// (q4_0: 0.034 to 0.0025, q8_0: 0.007 to 0.0002). gemma3's F16-table GELU
// and the F16 block scales turn any one-ulp difference in the f32
// arithmetic before them into such steps, which the 4-bit codes then
// carry, so Vulkan met the bounds only once its F32 path gave the CPU
// backend's bits (kvQuantBound).
var kvQuantOpen = map[string]struct {
	guard float64
	why   string
}{}

// TestKVQuantMatchesLlamaCpp: with the KV cache in q8_0 or q4_0 (keys and
// values), the CPU backend matches llama.cpp's reference run with the same
// cache types (its -ctk/-ctv with flash attention and the Hadamard
// rotation), teacher-forced, over each position's reference top-10.
func TestKVQuantMatchesLlamaCpp(t *testing.T) {
	dir := testenv.Shared(t, filepath.Join("reference", "kvquant"))
	files, _ := filepath.Glob(filepath.Join(dir, "*-kv*.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "2026", "*-kv*.json"))
	files = append(files, more...)
	ran := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		i := strings.LastIndex(name, "-kv")
		model, kinds := name[:i]+".gguf", strings.Split(name[i+3:], "-")
		if filepath.Base(filepath.Dir(f)) == "2026" {
			model = "2026/" + model
		}
		k, v := backend.KVType(kinds[0]), backend.KVType(kinds[1])
		if !k.Quantized() {
			continue // the f16 runs are the other reference tests' business
		}
		ran++
		for _, be := range testBackends(t) {
			bound := kvQuantBound(model, be, k)
			if open, ok := kvQuantOpen[name]; ok && be == "vulkan" {
				t.Logf("%s on vulkan: %s", name, open.why)
				bound = open.guard
			}
			t.Run(be+"/"+name, func(t *testing.T) { kvQuantMatch(t, f, model, be, k, v, bound) })
		}
	}
	if ran == 0 {
		t.Skip("no quantized-cache references")
	}
}

// kvQuantMatch is one reference file of TestKVQuantMatchesLlamaCpp on
// backend be.
func kvQuantMatch(t *testing.T, f, model, be string, k, v backend.KVType, bound float64) {
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), testenv.Model(t, model), Options{Backend: be, ContextSize: 512, Template: "none", KVType: k, KVTypeV: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if ids := s.tok.Encode(r.Prompt, true, false); !slices.Equal(ids, r.PromptTokens) {
		t.Fatalf("prompt tokens %v, llama.cpp %v", ids, r.PromptTokens)
	}
	worst := 0.0
	for p, logits := range teacherForced(t, s, r) {
		top := r.Steps[p].Top
		for _, e := range top {
			d := math.Abs(float64(logits[int(e[0])]) - e[1])
			worst = math.Max(worst, d)
			if d > bound {
				t.Errorf("pos %d token %d: logit %.4f, llama.cpp %.4f (bound %g)", p, int(e[0]), logits[int(e[0])], e[1], bound)
			}
		}
		if top[0][1]-top[1][1] > bound && argmax(logits) != int(top[0][0]) {
			t.Errorf("pos %d: top-1 %d, llama.cpp %d", p, argmax(logits), int(top[0][0]))
		}
	}
	t.Logf("%s on %s with a %s/%s cache: max |Δlogit| over the reference top-10s %.4f (bound %g)", model, be, k, v, worst, bound)
}

// TestKVQuantRotationMatters: the same q4_0 run without the Hadamard
// rotation misses llama.cpp's reference by far more than the bound — the
// rotation is what the match rests on (llama.cpp's own norot/ files move
// by 1.3-3.7 on these models).
func TestKVQuantRotationMatters(t *testing.T) {
	for _, be := range testBackends(t) {
		t.Run(be, func(t *testing.T) { kvQuantRotationMatters(t, be) })
	}
}

func kvQuantRotationMatters(t *testing.T, be string) {
	r := loadReference(t, filepath.Join("kvquant", "synth-qwen3-F32-kvq4_0-q4_0.json"))
	worst := func() float64 {
		s, err := Load(context.Background(), testenv.Model(t, "synth-qwen3-F32.gguf"), Options{Backend: be, ContextSize: 512, Template: "none", KVType: backend.KVQ4_0})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w := 0.0
		for p, logits := range teacherForced(t, s, r) {
			for _, e := range r.Steps[p].Top {
				w = math.Max(w, math.Abs(float64(logits[int(e[0])])-e[1]))
			}
		}
		return w
	}
	with := worst()
	t.Setenv("VKCHAT_KV_ROTATE", "off")
	without := worst()
	if with > 0.1 || without < 0.5 {
		t.Errorf("max |Δlogit| %.4f with the rotation, %.4f without: want ≤ 0.1 and ≥ 0.5", with, without)
	}
	t.Logf("q4_0 cache on synth-qwen3-F32 (%s): max |Δlogit| %.4f with the rotation, %.4f without", be, with, without)
}

// TestKVQuantRefusals: what llama.cpp refuses is refused on both
// backends, naming why — a quantized half (keys, values or both) on a
// head size that is not a multiple of 32 (stories260K: 8), a quantized or
// mixed cache for multi-head latent attention's latent rows — and an
// unknown type naming the types; every pair of types llama.cpp's flash
// attention runs loads on both (the mixed pairs' numbers are
// TestKVQuantBackendsAgree's). The Vulkan backend keeps a mixed pair in
// blocks of 32, so an f16/f32 pair on a head size of 8, which the CPU
// backend runs, is refused there naming the head size.
func TestKVQuantRefusals(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	mla := testenv.Model(t, "2026b/synth-deepseek2-F32.gguf")
	runs := testenv.Model(t, "synth-qwen3-F32.gguf")
	q8, q4, f16, f32 := backend.KVQ8_0, backend.KVQ4_0, backend.KVF16, backend.KVF32
	for _, be := range testBackends(t) {
		for _, kv := range [][2]backend.KVType{{q8, q8}, {q8, f16}, {f16, q4}, {f32, q8}, {backend.KVIQ4_NL, backend.KVIQ4_NL}} {
			_, err := Load(context.Background(), path, Options{Backend: be, ContextSize: 64, Template: "none", KVType: kv[0], KVTypeV: kv[1]})
			if err == nil || !strings.Contains(err.Error(), "head size is 8") {
				t.Errorf("%s: %s/%s on head size 8: %v, want a refusal naming the head size", be, kv[0], kv[1], err)
			}
		}
		for _, kv := range [][2]backend.KVType{{q8, q8}, {q8, f16}, {f16, f32}} {
			_, err := Load(context.Background(), mla, Options{Backend: be, ContextSize: 64, Template: "none", KVType: kv[0], KVTypeV: kv[1]})
			if err == nil || !strings.Contains(err.Error(), "multi-head latent attention (MLA)") {
				t.Errorf("%s: a %s/%s cache for MLA: %v, want a refusal naming MLA", be, kv[0], kv[1], err)
			}
		}
		for _, kv := range [][2]backend.KVType{{q8, f16}, {f16, q8}, {f32, q4}, {backend.KVQ5_1, f32}, {f16, backend.KVQ4_1}, {f16, f32}, {f32, f16}} {
			s, err := Load(context.Background(), runs, Options{Backend: be, ContextSize: 64, Template: "none", KVType: kv[0], KVTypeV: kv[1]})
			if err != nil {
				t.Errorf("%s: a %s/%s cache: %v, want it to run", be, kv[0], kv[1], err)
				continue
			}
			if got, want := s.Info().KVType, backend.KVName(kv[0], kv[1]); got != want {
				t.Errorf("%s: a %s/%s cache reports %q, want %q", be, kv[0], kv[1], got, want)
			}
			s.Close()
		}
		_, err := Load(context.Background(), path, Options{Backend: be, ContextSize: 64, Template: "none", KVType: f16, KVTypeV: f32})
		switch {
		case be == "vulkan" && (err == nil || !strings.Contains(err.Error(), "head size is 8")):
			t.Errorf("vulkan: an f16/f32 cache on head size 8: %v, want a refusal naming the head size", err)
		case be == "cpu" && err != nil:
			t.Errorf("cpu: an f16/f32 cache on head size 8: %v, want it to run", err)
		}
	}
	_, err := Load(context.Background(), path, Options{Backend: "cpu", ContextSize: 64, Template: "none", KVType: "q3_x"})
	if err == nil || !strings.Contains(err.Error(), `"q3_x"`) {
		t.Errorf("an unknown type: %v, want a refusal naming it", err)
	}
}

// TestKVQuantSoftcapAndSinks: on the models whose attention has a soft-cap
// (gemma2) or sinks (gpt-oss), which no quantized-cache reference covers,
// a q8_0 cache stays within the quantization's own effect of the f16
// cache (the doc measures 0.34/0.24 for gpt-oss): a soft-cap or a sink
// handled differently on the quantized path moves the logits by far more.
func TestKVQuantSoftcapAndSinks(t *testing.T) {
	for _, model := range []string{"synth-gemma2-F32.gguf", "2026/synth-gpt-oss-F32.gguf"} {
		t.Run(model, func(t *testing.T) {
			r := loadReference(t, strings.TrimSuffix(model, ".gguf")+".json") // its prompt and greedy tokens
			logits := map[backend.KVType][][]float32{}
			for _, kv := range []backend.KVType{backend.KVF16, backend.KVQ8_0} {
				s, err := Load(context.Background(), testenv.Model(t, model), Options{Backend: "cpu", ContextSize: 512, Template: "none", KVType: kv})
				if err != nil {
					t.Fatal(err)
				}
				logits[kv] = teacherForced(t, s, r)
				s.Close()
			}
			worst := 0.0
			for p := range logits[backend.KVF16] {
				for i, f := range logits[backend.KVF16][p] {
					worst = math.Max(worst, math.Abs(float64(logits[backend.KVQ8_0][p][i]-f)))
				}
			}
			t.Logf("%s: q8_0 against f16 cache, max |Δlogit| %.3f", model, worst)
			if worst > 1 {
				t.Errorf("%s: a q8_0 cache moves the logits by %.3f from the f16 cache's (over 1)", model, worst)
			}
		})
	}
}

// TestKVQuantQ4_1Q5_1: no llama.cpp reference covers the q4_1 and q5_1
// caches (their blocks carry a minimum beside the scale, the query is
// converted to Q8_1 for the score), so each is held against the engine's
// own f32 cache on the f16 reference's prompt, teacher-forced: its
// distance must follow the codes' precision — above q8_0's, 5-bit below
// 4-bit — and stay near the type of the same width without a minimum
// (within 1.5x of q5_0's and q4_0's: after the Hadamard rotation a head's
// values are near symmetric, so the minimum buys little; both widths
// measured within 15%). A minimum dropped or a Q8_1 sum misread shifts
// every value of a block and lands far outside.
func TestKVQuantQ4_1Q5_1(t *testing.T) {
	for _, model := range []string{"synth-F32", "synth-qwen3-F32"} {
		t.Run(model, func(t *testing.T) {
			r := loadReference(t, filepath.Join("kvquant", model+"-kvf16-f16.json"))
			dist := map[backend.KVType]float64{}
			var exact [][]float32
			for _, kv := range []backend.KVType{backend.KVF32, backend.KVQ8_0, backend.KVQ5_1, backend.KVQ5_0, backend.KVQ4_1, backend.KVQ4_0} {
				s, err := Load(context.Background(), testenv.Model(t, model+".gguf"), Options{Backend: "cpu", ContextSize: 512, Template: "none", KVType: kv})
				if err != nil {
					t.Fatal(err)
				}
				got := teacherForced(t, s, r)
				s.Close()
				if exact == nil {
					exact = got
					continue
				}
				for p, logits := range got {
					for j, f := range logits {
						dist[kv] = math.Max(dist[kv], math.Abs(float64(f-exact[p][j])))
					}
				}
			}
			t.Logf("%s: max |Δlogit| from the f32 cache: %v", model, dist)
			for _, c := range [][2]backend.KVType{{backend.KVQ8_0, backend.KVQ5_1}, {backend.KVQ5_1, backend.KVQ4_1}} {
				if !(dist[c[1]] > dist[c[0]]) {
					t.Errorf("%s: a %s cache is %.3f from the f32 cache, a %s cache %.3f: want the coarser codes farther", model, c[1], dist[c[1]], c[0], dist[c[0]])
				}
			}
			for _, c := range [][2]backend.KVType{{backend.KVQ5_1, backend.KVQ5_0}, {backend.KVQ4_1, backend.KVQ4_0}} {
				if dist[c[0]] > 1.5*dist[c[1]] {
					t.Errorf("%s: a %s cache is %.3f from the f32 cache, over 1.5x the %s cache's %.3f", model, c[0], dist[c[0]], c[1], dist[c[1]])
				}
			}
		})
	}
}

// TestKVQuantIQ4NL: no llama.cpp reference covers an iq4_nl cache (4-bit
// indices into a fixed non-linear table, the scale a least-squares fit,
// the query converted to Q8_0 for the score), so it is held as q4_1 and
// q5_1 are (TestKVQuantQ4_1Q5_1): against the engine's own f32 cache on
// the f16 reference's prompt, teacher-forced, on the CPU backend, its
// distance must be above q8_0's and within kvQuantIQ4NLFactor of q4_0's
// (the same bits a value; llama.cpp's doc measures iq4_nl's smallest
// effect against f16 beside q4_1's, both near q4_0's); keys alone and
// values alone each move the logits (neither half is left unquantized).
// A table misread or a nibble order swapped decodes every block wrong
// and lands far outside. The Vulkan backend's iq4_nl cache is held to
// the CPU backend's by TestKVQuantBackendsAgree.
func TestKVQuantIQ4NL(t *testing.T) {
	iq, q4, q8, f32 := backend.KVIQ4_NL, backend.KVQ4_0, backend.KVQ8_0, backend.KVF32
	for _, model := range []string{"synth-F32", "synth-qwen3-F32"} {
		t.Run(model, func(t *testing.T) {
			r := loadReference(t, filepath.Join("kvquant", model+"-kvf16-f16.json"))
			dist := map[string]float64{}
			var exact [][]float32
			for _, kv := range [][2]backend.KVType{{f32, f32}, {q8, q8}, {q4, q4}, {iq, iq}, {iq, f32}, {f32, iq}} {
				s, err := Load(context.Background(), testenv.Model(t, model+".gguf"), Options{Backend: "cpu", ContextSize: 512, Template: "none", KVType: kv[0], KVTypeV: kv[1]})
				if err != nil {
					t.Fatal(err)
				}
				got := teacherForced(t, s, r)
				if exact == nil {
					exact = make([][]float32, len(got))
					for p := range got {
						exact[p] = slices.Clone(got[p])
					}
				}
				dist[backend.KVName(kv[0], kv[1])] = logitsDelta(got, exact)
				s.Close()
			}
			t.Logf("%s: max |Δlogit| from the f32 cache: %v", model, dist)
			if !(dist["iq4_nl"] > dist["q8_0"]) || dist["iq4_nl"] > kvQuantIQ4NLFactor*dist["q4_0"] {
				t.Errorf("%s: an iq4_nl cache is %.3f from the f32 cache, want above q8_0's %.3f and within %g × q4_0's %.3f", model, dist["iq4_nl"], dist["q8_0"], kvQuantIQ4NLFactor, dist["q4_0"])
			}
			for _, half := range []string{"iq4_nl/f32", "f32/iq4_nl"} {
				if dist[half] < 0.1*dist["iq4_nl"] || dist[half] > 1.5*dist["iq4_nl"] {
					t.Errorf("%s: an %s cache is %.3f from the f32 cache, want between 0.1 and 1.5 × the iq4_nl cache's %.3f", model, half, dist[half], dist["iq4_nl"])
				}
			}
		})
	}
}

// kvQuantIQ4NLFactor bounds an iq4_nl cache's distance from the f32 cache
// by q4_0's (TestKVQuantIQ4NL).
var kvQuantIQ4NLFactor = 1.5

// TestMLAKVTypes: multi-head latent attention's cache (one row of latent
// and RoPE key, read as the values too) takes f16 or f32; a quantized
// type, or keys and values of two types, is refused naming MLA; an f32
// cache runs the same math as the f16 one, short of its rounding.
func TestMLAKVTypes(t *testing.T) {
	model := "2026b/synth-deepseek2-F32"
	path := testenv.Model(t, model+".gguf")
	for _, o := range []Options{{KVType: backend.KVQ8_0}, {KVType: backend.KVQ4_0}, {KVType: backend.KVF16, KVTypeV: backend.KVF32}} {
		o.Backend, o.ContextSize, o.Template = "cpu", 64, "none"
		_, err := Load(context.Background(), path, o)
		if err == nil || !strings.Contains(err.Error(), "multi-head latent attention (MLA)") {
			t.Errorf("%s/%s cache: %v, want a refusal naming MLA", o.KVType, o.KVTypeV, err)
		}
	}
	r := loadReference(t, model+".json")
	logits := map[backend.KVType][][]float32{}
	for _, kv := range []backend.KVType{backend.KVF16, backend.KVF32} {
		s, err := Load(context.Background(), path, Options{Backend: "cpu", ContextSize: 512, Template: "none", KVType: kv})
		if err != nil {
			t.Fatal(err)
		}
		logits[kv] = teacherForced(t, s, r)
		// one row of 64 latent + 16 RoPE values a position and layer
		if got, want := s.Stats().KVAllocated, int64(4*512*80*kv.Bytes()); got != want || s.Info().MLA == nil {
			t.Errorf("%s cache: %d B allocated, want 4 layers × 512 × 80 × %d B = %d B (MLA info %v)", kv, got, kv.Bytes(), want, s.Info().MLA)
		}
		s.Close()
	}
	worst := 0.0
	for p := range logits[backend.KVF16] {
		for i, x := range logits[backend.KVF16][p] {
			worst = math.Max(worst, math.Abs(float64(x-logits[backend.KVF32][p][i])))
		}
	}
	t.Logf("f32 cache against f16: max |Δlogit| %.3g", worst)
	if worst == 0 || worst > 0.05 {
		t.Errorf("f32 cache moves the logits by %.3g from the f16 cache's: want a rounding's difference (0 < |Δ| ≤ 0.05)", worst)
	}
}

// TestKVQuantBackendsAgree: the Vulkan backend's quantized cache (q8_0
// and q4_0 on every model, q5_0/q4_1/q5_1/iq4_nl on qwen3 and gemma3; the
// rope kernel's f32 rows rotated and quantized by kvquant.comp, attnq.comp
// reading the codes) gives the CPU backend's logits, teacher-forced on each
// model's reference prompt and greedy reply (a prefill, then decode steps),
// within kvQuantAgree: on the models with a window ring (gemma3), a
// soft-cap (gemma2), sinks (gpt-oss) and a hybrid (qwen35), none of which
// the kernels branch on by name. The two backends differ in the order
// their products sum, which a 4-bit code can flip.
//
// Mixed pairs (kvQuantMixed: a quantized half beside an f16 or f32 one,
// and f16 beside f32), which llama.cpp's flash attention runs, agree too,
// and on each backend a mixed pair's distance from the f32 cache is at
// most kvQuantMixedFactor times its pure partner's (the pair with both
// halves of its quantized type; f16/f16 for f16 with f32) and at least
// kvQuantMixedFloor times it: the quantized half is quantized, and read
// as its type (a half read as the other's type, or left unrotated where
// the partner rotates, lands far outside).
func TestKVQuantBackendsAgree(t *testing.T) {
	if !slices.Contains(testBackends(t), "vulkan") {
		t.Skip("no Vulkan device")
	}
	for _, model := range []string{"synth-qwen3-F32", "synth-gemma3-F32", "synth-gemma2-F32", "2026/synth-gpt-oss-F32", "2026/synth-qwen35-F32"} {
		r := loadReference(t, model+".json")
		s, err := Load(context.Background(), testenv.Model(t, model+".gguf"), Options{Backend: "vulkan", ContextSize: 512, Template: "none"})
		if err != nil {
			t.Fatal(err)
		}
		f16Alloc := s.be.Memory().KVAllocated
		s.Close()
		var pairs [][2]backend.KVType
		for _, kv := range []backend.KVType{backend.KVQ8_0, backend.KVQ4_0} {
			pairs = append(pairs, [2]backend.KVType{kv, kv})
		}
		if model == "synth-qwen3-F32" || model == "synth-gemma3-F32" {
			for _, kv := range []backend.KVType{backend.KVQ5_0, backend.KVQ4_1, backend.KVQ5_1, backend.KVIQ4_NL} {
				pairs = append(pairs, [2]backend.KVType{kv, kv})
			}
		}
		pairs = append(pairs, kvQuantMixed[model]...)
		// each backend's logits per pair, and with the f32 cache and a
		// mixed pair's partner where a mixed pair needs them
		logits := map[string][][]float32{}
		run := func(t *testing.T, be string, k, v backend.KVType) ([][]float32, int64) {
			key := be + " " + backend.KVName(k, v)
			s, err := Load(context.Background(), testenv.Model(t, model+".gguf"), Options{Backend: be, ContextSize: 512, Template: "none", KVType: k, KVTypeV: v})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if logits[key] == nil {
				for _, l := range teacherForced(t, s, r) {
					logits[key] = append(logits[key], slices.Clone(l))
				}
			}
			return logits[key], s.be.Memory().KVAllocated
		}
		for _, kv := range pairs {
			name := backend.KVName(kv[0], kv[1])
			t.Run(model+"/"+name, func(t *testing.T) {
				got := map[string][][]float32{}
				alloc := map[string]int64{}
				for _, be := range []string{"cpu", "vulkan"} {
					got[be], alloc[be] = run(t, be, kv[0], kv[1])
				}
				worst := logitsDelta(got["cpu"], got["vulkan"])
				t.Logf("%s, %s cache: max |Δlogit| vulkan against cpu %.4f", model, name, worst)
				// the cache in the types' rows (head sizes multiples of 64:
				// no padding), the same positions as the f16 cache; each
				// buffer's size rounds up to the device's alignment
				if want := f16Alloc * (kv[0].RowBytes(32) + kv[1].RowBytes(32)) / 128; alloc["vulkan"] < want || alloc["vulkan"] > want+want/100 {
					t.Errorf("%s, %s cache: vulkan allocates %d bytes of KV cache, want %d (f16's %d × (%d + %d)/128)", model, name, alloc["vulkan"], want, f16Alloc, kv[0].RowBytes(32), kv[1].RowBytes(32))
				}
				bound := kvQuantAgree[kv[0]]
				if kv[1].Quantized() {
					bound = math.Max(bound, kvQuantAgree[kv[1]])
				}
				if !kv[0].Quantized() && !kv[1].Quantized() {
					bound = kvQuantAgreePlain
				}
				if g, ok := kvQuantAgreeOpen[model+"/"+name]; ok {
					t.Logf("%s, %s cache: open, guard %g (kvQuantAgree)", model, name, g)
					bound = g
				}
				if g, ok := kvQuantAgreeHeld[model+"/"+name]; ok {
					bound = g
				}
				if worst > bound {
					t.Errorf("%s, %s cache: vulkan's logits %.4f from cpu's, over %g", model, name, worst, bound)
				}
				if kv[0] == kv[1] {
					return
				}
				partner := kv[0]
				switch {
				case kv[1].Quantized():
					partner = kv[1]
				case !kv[0].Quantized():
					partner = backend.KVF16
				}
				for _, be := range []string{"cpu", "vulkan"} {
					exact, _ := run(t, be, backend.KVF32, backend.KVF32)
					pure, _ := run(t, be, partner, partner)
					dm, dp := logitsDelta(got[be], exact), logitsDelta(pure, exact)
					t.Logf("%s on %s: max |Δlogit| from the f32 cache %.4f, %s/%s's %.4f (ratio %.2f)", name, be, dm, partner, partner, dp, dm/dp)
					if dm > kvQuantMixedFactor*dp || dm < kvQuantMixedFloor*dp {
						t.Errorf("%s, %s cache on %s: %.4f from the f32 cache, want between %g and %g × the %s cache's %.4f", model, name, be, dm, kvQuantMixedFloor, kvQuantMixedFactor, partner, dp)
					}
				}
			})
		}
	}
}

// logitsDelta is the largest |a - b| over every position's logits.
func logitsDelta(a, b [][]float32) float64 {
	worst := 0.0
	for p, logits := range a {
		for i, f := range logits {
			worst = math.Max(worst, math.Abs(float64(b[p][i]-f)))
		}
	}
	return worst
}

// kvQuantMixed are the mixed pairs TestKVQuantBackendsAgree runs per
// model: every quantized type once beside f16 or f32 as keys and as values
// on qwen3 (rotated keys of order 128, values of 64), f16 beside f32 both
// ways, and a pair each way where a ring (gemma3), a soft-cap (gemma2),
// sinks (gpt-oss) or a hybrid (qwen35) joins. gpt-oss's value half is
// q4_0, not q8_0: f16/q8_0 crosses the router near-tie at position 29
// (kvQuantAgree) on both backends — 0.685 from the f32 cache, where the
// Vulkan backend's q8_0/q8_0 does not cross it (0.267) — which says
// nothing about the cache.
var kvQuantMixed = map[string][][2]backend.KVType{
	"synth-qwen3-F32": {
		{backend.KVQ8_0, backend.KVF16}, {backend.KVF16, backend.KVQ8_0}, {backend.KVQ4_0, backend.KVF32}, {backend.KVF32, backend.KVQ4_0},
		{backend.KVQ5_0, backend.KVF16}, {backend.KVF16, backend.KVQ5_1}, {backend.KVQ4_1, backend.KVF16},
		{backend.KVIQ4_NL, backend.KVF32}, {backend.KVF16, backend.KVIQ4_NL},
		{backend.KVF16, backend.KVF32}, {backend.KVF32, backend.KVF16},
	},
	"synth-gemma3-F32":       {{backend.KVQ8_0, backend.KVF16}, {backend.KVF16, backend.KVQ8_0}},
	"synth-gemma2-F32":       {{backend.KVQ8_0, backend.KVF16}, {backend.KVF32, backend.KVQ4_0}},
	"2026/synth-gpt-oss-F32": {{backend.KVQ8_0, backend.KVF16}, {backend.KVF16, backend.KVQ4_0}},
	"2026/synth-qwen35-F32":  {{backend.KVQ4_0, backend.KVF16}, {backend.KVF16, backend.KVQ8_0}},
}

// kvQuantMixedFactor and kvQuantMixedFloor bound a mixed pair's distance
// from the f32 cache by its pure partner's (TestKVQuantBackendsAgree).
var kvQuantMixedFactor, kvQuantMixedFloor = 1.5, 0.25

// kvQuantAgreePlain bounds the backends' distance with an f16 half beside
// an f32 one: what the f16 and f32 caches agree within.
var kvQuantAgreePlain = 0.03

// kvQuantAgree bounds the two backends' distance with a quantized cache:
// the bound each meets against llama.cpp (kvQuantBound), far below what
// the rotation left out or the cache left in f16 moves (0.06-0.46 for
// q8_0, 0.75-3.9 for q4_0, the doc's table).
//
// gpt-oss's q8_0 is held at its measured 0.677 (guard 0.7): a router
// near-tie, not a cache bug. At decode position 29 layer 3's router puts
// its 4th and 5th experts 0.0024 apart on the CPU backend (2 before 1)
// and 0.0043 apart on Vulkan (1 before 2) — and 0.0014 apart with the f32
// cache — while every other layer's 4th-to-5th margin there is ≥ 1.75; the
// backends' router logits at that step differ by up to 0.0066, so the two
// pick different experts and the logits move by 0.68 (the CPU backend's
// q8_0 is 0.716 from its own f32 cache there, Vulkan's 0.164). Every other
// position is within 0.034. Those 0.01-0.03 are sporadic flips too: they
// start at one position and carry on through the cache (at 20 on the
// reference sequence, where a query block scale of layer 0, amax/127, lies
// one f32 ulp from an f16 rounding midpoint and layer 0's router logits
// already differ by 7e-4, against 1e-5 at position 29; at 35 and 5 with
// the sequence shortened by 1 and 3 tokens), the positions before agree
// to 1e-5 as the f32 caches do everywhere, and with VKCHAT_KV_ROTATE=off
// no position moves beyond 1.1e-5: the Hadamard rotation's sums carry the
// backends' last-bit differences into the roundings. gpt-oss's q4_0 agrees within
// 0.02; qwen35 agrees to 0.0001 and qwen3 to 0.002 at every type but
// iq4_nl (0.0023: kvQuantAgreeOpen says why).
var kvQuantAgree = map[backend.KVType]float64{backend.KVQ8_0: 0.03, backend.KVQ4_0: 0.1, backend.KVQ5_0: 0.1, backend.KVQ4_1: 0.1, backend.KVQ5_1: 0.1, backend.KVIQ4_NL: 0.1}

// kvQuantAgreeOpen are kvQuantAgree's open cases and their guards.
// gemma3 was one (q8_0 0.0517, q4_0 0.2114, q5_0 0.2237, q4_1 0.3460,
// q5_1 0.1592, q8_0/f16 0.0298, iq4_nl 0.1719 after Vulkan's RoPE, scores
// and softmax rounded as the CPU backend's): it turns one-ulp differences
// into steps (kvQuantOpen), and the F32 products, the norms folded into
// them and the GELU still rounded apart. With those rounded as the CPU
// backend's (dense F32 rows in tinyBLAS's order, RMS norms summed as
// ggml's, the CPU's GELU table) the two agree within kvQuantAgreeHeld.
// iq4_nl (its rows bit-exact with the CPU's quantizer,
// TestKVQuantRowsMatchCPU; layer 0's attention too,
// TestKVQuantAttentionMatchesCPU) measured 0.0023 on qwen3, whose layer 1
// takes one such step at one decode position.
var kvQuantAgreeOpen = map[string]float64{"2026/synth-gpt-oss-F32/q8_0": 0.7}

// kvQuantAgreeHeld are pairs held below kvQuantAgree, at their measured
// figures. gemma3 agrees to the bit at every pair (0.0000) since its Q/K
// norms sum as ggml's too (rope.glsl QKEXACT, an all-F32 model's); before
// that q8_0 0.0013, q4_1 and q5_1 0.0012, q8_0/f16 0.0096, f16/q8_0 0.0062.
var kvQuantAgreeHeld = map[string]float64{"synth-gemma3-F32/q8_0": 1e-4, "synth-gemma3-F32/q4_0": 1e-4,
	"synth-gemma3-F32/q5_0": 1e-4, "synth-gemma3-F32/q4_1": 1e-4, "synth-gemma3-F32/q5_1": 1e-4,
	"synth-gemma3-F32/iq4_nl": 1e-4, "synth-gemma3-F32/q8_0/f16": 1e-4, "synth-gemma3-F32/f16/q8_0": 1e-4}
