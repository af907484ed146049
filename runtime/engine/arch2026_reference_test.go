package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// The 2026 families sit in 2026/ folders of the shared data
// (models/2026/synth-*.gguf, reference/2026/*.json: random weights, the
// 512-token stories vocabulary, llama.cpp's logits). Each file joins this
// table as its architecture lands, with the backends that run it so far.
//
// Bounds (issue 24): F32 top-5 logits within 0.01 of llama.cpp at prompt
// positions (two llama.cpp builds, AVX2 and AVX-512, differ by up to
// 7.4e-3 on these random models) and 0.03 at generated ones; quantized
// files within 0.25, for the reason archBounds gives.
var arch2026Refs = []archRef{
	{"synth-qwen3moe-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.01, generated: 0.03, greedyGap: nearTie}},
	{"synth-qwen3moe-Q4_K_M", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	{"synth-qwen3moe-MXFP4_MOE", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	{"synth-gpt-oss-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.01, generated: 0.03, greedyGap: nearTie}},
	{"synth-gpt-oss-MXFP4_MOE", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	{"synth-qwen35-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.01, generated: 0.03, greedyGap: nearTie}},
	{"synth-qwen35-Q4_K_M", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	{"synth-qwen35moe-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.01, generated: 0.03, greedyGap: nearTie}},
	{"synth-qwen35moe-Q4_K_M", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	{"synth-lfm2-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.01, generated: 0.03, greedyGap: nearTie}},
	{"synth-lfm2-Q4_K_M", []string{"cpu", "vulkan"}, archBound{prompt: 0.25, generated: 0.25, greedyGap: 0.5}},
	// Gemma 4: the target (F32 0.01 at prompt positions and 0.03
	// generated; Q4_K_M 0.25 with greedyGap 0.5) is NOT met. These rows
	// are a regression guard at what is measured, not a claim of accuracy:
	//   F32     CPU 5.5e-2 / 4.1e-2, Vulkan 4.5e-2 / 5.8e-2
	//   Q4_K_M  CPU 0.27 / 0.36,     Vulkan 0.43 / 0.51 (0.72 / 1.05
	//           before the Vulkan prefill product rounded x once per
	//           product: a change of summation and rounding order alone)
	// with the bounds a little above them; greedy agrees up to the first
	// top-two gap under the 0.5 on both files and backends.
	// The F32 gap is this model's noise floor, shown by gemma4_oracle_test.go:
	// - An independent rebuild of gemma4.cpp with ggml-cpu's rounding points
	//   and AVX2 summation orders (tinyBLAS for the prompt batch,
	//   ggml_vec_dot_f32 for single tokens) matches llama.cpp at position 0
	//   to 1.1e-6, so the graph is llama.cpp's (structure, norms, PLE,
	//   layer_output_scale, soft-cap, F16 GELU table, F16 V).
	// - At position 1 it is 3.2e-4 off, and moving ONE attention score by
	//   ONE float32 ulp (layer 0 head 1, or layer 3 head 0 or 3) brings it
	//   to 1.0e-6; no score summation order tried (ggml's AVX2 one, exact,
	//   sequential, AVX-512's, tinyBLAS's) reproduces position 1, and each
	//   gives another 0.8e-2..2.3e-2 prompt maximum.
	// - Moving about half of all scores by one ulp moves the rebuild's
	//   logits by 1.4e-2..2.5e-2 at prompt positions and 2.6e-2..5.9e-2 at
	//   generated ones (six seeds): the size of both backends' gaps. Gemma 4
	//   attends with scale 1 (its Q/K norms scale), scores reach ~20, and one
	//   ulp of a score (2e-6) is 2e-6 of its softmax weight, ~16 ulps of the
	//   attention output, which then flips F16 roundings (K cache, GELU
	//   table). The 7.4e-3 between two llama.cpp builds was measured on the
	//   other synth models, whose 1/sqrt(d) scale keeps scores small.
	// - The worst positions (15, 17, 22 on both backends) are flips: the
	//   rebuild with RoPE unfused (x0*c and x1*s each rounded, as the CPU
	//   backend does; the Vulkan shader leaves it to the driver) is 4.5e-2
	//   off at position 17, with ggml's contracted
	//   x0*c - x1*s (first product fused) 1.7e-2. Fusing the CPU backend's
	//   RoPE alone changes nothing there: its F32 products (summed in
	//   float64) already differ from tinyBLAS's by ulps, so the same K
	//   rounds elsewhere. Matching llama.cpp below 0.01 would take its
	//   product order in every F32 product, its RoPE contraction and its
	//   score order, which its logits do not reveal.
	// Q4_K_M on the CPU is exact (~1e-6) at 10 of the 21 prompt positions
	// and off by 0.04-0.27 at the others: discrete flips again. Its first
	// miss (position 0, 5.9e-2) starts in layer 3 after its KV is written;
	// no Q8_K activation there sits on a rounding tie, the attention path
	// (in place or not) does not change it, and quantizing Q8_0
	// activations as ggml's AVX2 code does (127/amax, ties to even, what
	// both backends do now) changed no figure.
	{"synth-gemma4-F32", []string{"cpu", "vulkan"}, archBound{prompt: 0.06, generated: 0.065, greedyGap: nearTie}},
	{"synth-gemma4-Q4_K_M", []string{"cpu", "vulkan"}, archBound{prompt: 0.5, generated: 0.6, greedyGap: 0.5}},
}

func TestArchs2026MatchLlamaCpp(t *testing.T) {
	checkArchRefs(t, "2026", arch2026Refs, nil)
}

// A 2026 model asked for on a backend that does not run it yet is refused
// with an error that names what is missing and the backend that runs it.
func TestArchs2026RefusedByName(t *testing.T) {
	checkArchRefusals(t, "2026", arch2026Refs)
}

// archRef is a row of a reference table: a shared model file, the
// backends that run it so far and its bounds.
type archRef struct {
	name     string
	backends []string
	bound    archBound
}

// checkArchRefs checks each row of refs (files in folder/ of the shared
// models and references) on each backend that runs it, with the bounds
// in on["<backend>/<row>"] where that backend's differ from the row's.
func checkArchRefs(t *testing.T, folder string, refs []archRef, on map[string]archBound) {
	for _, backendName := range testBackends(t) {
		for _, ref := range refs {
			if !slices.Contains(ref.backends, backendName) {
				t.Logf("%s: not yet on the %s backend", ref.name, backendName)
				continue
			}
			b := ref.bound
			if o, ok := on[backendName+"/"+ref.name]; ok {
				b = o
			}
			t.Run(backendName+"/"+ref.name, func(t *testing.T) {
				checkArchReference(t, backendName, folder+"/"+ref.name, b)
			})
		}
	}
}

// checkArchRefusals: a row's model asked for on a backend that does not
// run it yet is refused with an error that names what is missing and the
// backend that runs it.
func checkArchRefusals(t *testing.T, folder string, refs []archRef) {
	for _, backendName := range testBackends(t) {
		for _, ref := range refs {
			if slices.Contains(ref.backends, backendName) {
				continue
			}
			t.Run(backendName+"/"+ref.name, func(t *testing.T) {
				_, err := Load(context.Background(), testenv.Model(t, folder+"/"+ref.name+".gguf"), Options{Backend: backendName, ContextSize: 64})
				if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "--backend cpu") {
					t.Fatalf("load on %s: %v; want ErrUnsupported pointing at the CPU backend", backendName, err)
				}
			})
		}
	}
}
