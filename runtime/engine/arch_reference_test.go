package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
)

// The synth-<arch> files (random weights, the 512-token stories vocabulary)
// against llama.cpp's own dumps of each: qwen3, gemma2, gemma3, phi3,
// smollm3, olmo2 and granite, each in F32, Q8_0 and Q4_K_M.
//
// F32: the reference top-5 logits within 5e-3 at prompt positions and 0.03
// at generated ones (teacher-forced), and greedy tokens identical up to the
// first position where llama.cpp's own top two are within nearTie.
// Q8_0 and Q4_K_M: within 0.25 — llama.cpp quantizes activations to 8 bits
// for quantized weights, and a one-ulp upstream difference can flip an int8
// activation and move a logit of these unconfident random models by ~0.1
// (see synthLogitTol) — and greedy tokens identical up to the first
// position where the reference top two are within twice that bound, the
// closest gap the bound alone guarantees.
//
// Measured on the cpu backend (go test ./runtime/engine -run
// TestArchsMatchLlamaCpp -v logs each file's figures): see the log lines
// "max |Δlogit|".
var archRefs = []string{"qwen3", "gemma2", "gemma3", "phi3", "smollm3", "olmo2", "granite"}

type archBound struct {
	prompt, generated float64 // top-5 |Δlogit| at prompt and generated positions
	greedyGap         float64 // greedy tokens compared up to the first reference gap below this
	// flip, when set, is a position held to flipBound instead: one where
	// a near-tie of the routing flips an expert (the table says which)
	flip      *int
	flipBound float64
}

var archBounds = map[string]archBound{
	"F32":    {prompt: 5e-3, generated: 0.03, greedyGap: nearTie},
	"Q8_0":   {prompt: 0.25, generated: 0.25, greedyGap: 0.5},
	"Q4_K_M": {prompt: 0.25, generated: 0.25, greedyGap: 0.5},
}

// archHeld holds a file on one backend at its measured figures where
// they miss archBounds.
//
// synth-gemma3-F32 on the CPU: prompt 5.22e-3 at position 18 (generated
// 7.1e-3). These synth-<arch> dumps come from an AVX-512 machine, whose
// tinyBLAS and ggml_vec_dot_f32 sum F32 products in 16 lanes; the CPU
// backend sums them in AVX2's 8 (quant.Matrix.RowByRow), which the newer
// 2026 and 2026b dumps (AVX2) match to the printed digits. Summed in
// float64 this file measured 4.82e-3: the same rounding noise, landing
// on either side of 5e-3. Emulating the AVX-512 build instead (tinyBLAS
// and ggml_vec_dot_f32 in 16 FMA lanes, ggml_vec_dot_f32 in blocks of 64,
// the lanes reduced as GCC's _mm512_reduce_add_ps folds halves; flash
// attention's ggml_vec_dot_f16 likewise) measured every prompt position of
// this file within 4.9e-7 (first departure at position 21), olmo2-F32's
// prompt 3.3e-3 -> 6.4e-5, qwen3-F32's 2.3e-3 -> 1.9e-4, granite-F32's
// 1.1e-5 -> 1.3e-6, while the AVX2 dumps moved away (2026 gemma4-F32's
// prompt 1.5e-6 -> 2.5e-2, 2026b gemma4moe-F32's 1.4e-6 -> 1.6e-2): each
// set of dumps follows its machine's order, so no one order serves both,
// and the backend keeps AVX2's (issue 41/43, f32order; not landed).
var archHeld = map[string]archBound{
	"cpu/synth-gemma3-F32": {prompt: 5.5e-3, generated: 0.03, greedyGap: nearTie},
	// Vulkan gives the CPU backend's logits on this all-F32 file (its f16
	// cache through attnq.comp's f16 path, the F32 path rounded as the
	// CPU's): measured 5.22e-3 / 7.07e-3, the CPU's figures, so it is held
	// where the CPU is, for the same reason (4.71e-3 / 6.44e-3 with
	// attention.comp's f32 accumulation, nearer this AVX-512 dump by
	// chance)
	"vulkan/synth-gemma3-F32": {prompt: 5.5e-3, generated: 0.03, greedyGap: nearTie},
}

// archBackendReady lists the backends that interpret the architecture
// recipe; a backend joins the table here once it does.
var archBackendReady = map[string]bool{"cpu": true, "vulkan": true}

func TestArchsMatchLlamaCpp(t *testing.T) {
	for _, backendName := range testBackends(t) {
		if !archBackendReady[backendName] {
			t.Logf("%s backend: not in archBackendReady, synth-<arch> files not checked", backendName)
			continue
		}
		for _, arch := range archRefs {
			for _, typ := range []string{"F32", "Q8_0", "Q4_K_M"} {
				name := fmt.Sprintf("synth-%s-%s", arch, typ)
				b := archBounds[typ]
				if held, ok := archHeld[backendName+"/"+name]; ok {
					b = held
				}
				t.Run(backendName+"/"+name, func(t *testing.T) {
					checkArchReference(t, backendName, name, b)
				})
			}
		}
	}
}

func checkArchReference(t *testing.T, backendName, name string, b archBound) {
	s := loadSession(t, name+".gguf", backendName)
	r := loadReference(t, name+".json")
	res, err := s.Evaluate(context.Background(), r.Prompt, len(r.Greedy), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.PromptTokens, r.PromptTokens) {
		t.Fatalf("prompt tokens %v, llama.cpp %v", res.PromptTokens, r.PromptTokens)
	}
	want := r.Greedy[:firstNearTie(r, b.greedyGap)]
	// Evaluate stops at an end-of-generation token and llama.cpp's dump
	// goes on past it (synth-granitehybrid-F32's eleventh token is EOS):
	// greedy is compared up to it, the steps after it teacher-forced below
	if i := slices.IndexFunc(want, s.tok.IsEOG); i >= 0 {
		want = want[:i]
	}
	if got := res.Greedy[:min(len(want), len(res.Greedy))]; !slices.Equal(got, want) {
		t.Errorf("greedy diverges at token %d of the %d before llama.cpp's first top-two gap under %g:\n got %v\nwant %v",
			firstDiff(got, want), len(want), b.greedyGap, got, want)
	}
	worstPrompt, worstGen := 0.0, 0.0
	for p, logits := range teacherForced(t, s, r) {
		tol, worst := b.generated, &worstGen
		if p < len(r.PromptTokens) {
			tol, worst = b.prompt, &worstPrompt
		}
		var flipped float64
		if b.flip != nil && p == *b.flip {
			tol, worst = b.flipBound, &flipped
		}
		for _, e := range r.Steps[p].Top[:5] {
			d := math.Abs(float64(logits[int(e[0])]) - e[1])
			*worst = math.Max(*worst, d)
			if d > tol {
				t.Errorf("pos %d token %d: logit %.5f, llama.cpp %.5f (|Δ| %.3g > %g)", p, int(e[0]), logits[int(e[0])], e[1], d, tol)
			}
		}
	}
	t.Logf("%s on %s: max |Δlogit| (reference top-5) prompt %.2e, generated %.2e; greedy %d/%d identical (%d compared)",
		name, backendName, worstPrompt, worstGen, firstDiff(res.Greedy, r.Greedy), len(r.Greedy), len(want))
	if b.flip != nil {
		t.Logf("%s on %s: position %d (an expert flip) held apart", name, backendName, *b.flip)
	}
}

// TestWindowedKVStats: the session reports the sliding-window layers'
// rings (at least the window, less than the context: a backend may keep
// a batch's worth more), KV allocated adds up from them, and KV used stops
// growing for them once they are full.
func TestWindowedKVStats(t *testing.T) {
	for _, backendName := range testBackends(t) {
		if !archBackendReady[backendName] {
			continue
		}
		t.Run(backendName, func(t *testing.T) {
			const ctx, n = 512, 100
			s := loadSession(t, "synth-gemma3-F32.gguf", backendName)
			st := s.Stats()
			if len(st.KVWindows) != 1 || st.KVWindows[0].Layers != 5 || st.KVWindows[0].Window < 8 || st.KVWindows[0].Window >= n {
				t.Fatalf("KV windows %v, want 5 layers holding 8 to %d positions", st.KVWindows, n-1)
			}
			ring := int64(st.KVWindows[0].Window)
			perLayer := int64(2 * 2 * 128 * 2) // K and V, 2 KV heads × 128 dims, F16
			if want := (1*ctx + 5*ring) * perLayer; st.KVAllocated != want {
				t.Errorf("KV allocated %d, want %d", st.KVAllocated, want)
			}
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(i%500 + 1)
			}
			if _, err := s.be.Forward(context.Background(), ids, 0, false); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			s.cached = append(s.cached[:0], ids...)
			s.mu.Unlock()
			if got, want := s.Stats().KVUsed, (n+5*ring)*perLayer; got != want {
				t.Errorf("KV used after %d positions %d, want %d (the global layer's %d, each local layer's %d)", n, got, want, n, ring)
			}
		})
	}
}
