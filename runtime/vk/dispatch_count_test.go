package vk

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"

	"vkchat/runtime/vk/vulkan"
)

// layerDispatches counts, per layer of a recorded step, the mat-vec
// dispatches and all dispatches (labels are "L<n> ...").
func layerDispatches(r *vulkan.Recorder, layers int) (matvecs, all []int) {
	matvecs, all = make([]int, layers), make([]int, layers)
	for _, m := range r.Recorded() {
		var l int
		var rest string
		if n, _ := fmt.Sscanf(m.Label, "L%d", &l); n != 1 || l >= layers {
			continue
		}
		rest = m.Label[strings.IndexByte(m.Label, ' ')+1:]
		all[l]++
		// the integer-dot mat-vec's rounding of x (matvec_idot.go) is
		// not a mat-vec: one per input, shared by its readers
		if !strings.HasPrefix(rest, "rope") && !strings.HasPrefix(rest, "attention") && !strings.Contains(rest, "vec_dot_type") {
			matvecs[l]++
		}
	}
	return matvecs, all
}

// TestGPULayoutDecodeDispatches counts the decode step's dispatches for the
// 1B Llama shape (embd 2048, ff 5632; two layers suffice, every layer is
// recorded alike) under the GPU layout: with x staged in shared memory no
// mat-vec splits K, so a layer takes 4 mat-vecs (QKV, O + residual, the
// gate/up pair, down + residual), plus with the integer-dot mat-vec one
// rounding of x per input (layerDispatches leaves those out); with the
// split attention, 5 dispatches in all (the rotation is the QKV product's
// epilogue, tuning.ropeInQKV).
func TestGPULayoutDecodeDispatches(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, gpuTuning)
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			shape := synth.Shapes["1b"]
			shape.Layers = 2
			path := filepath.Join(t.TempDir(), "1b.gguf")
			if err := synth.Write(path, shape, synth.Options{Type: typ, Vocab: vocab, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			vb, err := newTestBackend(d, loadModel(t, path), backend.Options{ContextSize: 64, Device: -1}, true, true)
			if err != nil {
				t.Fatal(err)
			}
			defer vb.Close()
			mv, all := layerDispatches(vb.graph.decode, shape.Layers)
			t.Logf("decode step: %d dispatches, %d barriers; per layer %d (%d mat-vecs)", vb.graph.decode.Dispatches, vb.graph.decode.Barriers, all[0], mv[0])
			for l := range mv {
				if mv[l] > 4 {
					t.Errorf("layer %d: %d mat-vec dispatches, want at most 4", l, mv[l])
				}
				// with the attention, whose last split merges the others
				// (no combine pass), and no rope dispatch
				if all[l] > 5 {
					t.Errorf("layer %d: %d dispatches, want at most 5", l, all[l])
				}
			}
		})
	}
}

// TestMLADispatches: a latent-attention layer's dispatches do not grow
// with its heads — the heads' KB and VB products are one expert mat-vec
// each over the (token, head) pairs, with one copy before and after
// each — in the decode step and the prefill chunk (whose quantized banks
// take the grouped product after one grouping dispatch), for synthetic
// deepseek2 files of 2 and 8 heads in Q8_0.
func TestMLADispatches(t *testing.T) {
	d := testDevice(t)
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	for _, typ := range []ggml.Type{ggml.Q8_0} {
		var counts [][2]int // per head count: layer 0's decode and prefill dispatches
		for _, heads := range []int{2, 8} {
			shape := synth.Shape{Arch: "deepseek2", Embd: 256, FF: 256, Heads: heads, KVHeads: 1, Layers: 2, Context: 128, Experts: 4, ExpertsUsed: 2, ExpertFF: 64}
			path := filepath.Join(t.TempDir(), "mla.gguf")
			if err := synth.Write(path, shape, synth.Options{Arch: "deepseek2", Type: typ, Vocab: vocab, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			vb, err := newTestBackend(d, loadModel(t, path), backend.Options{ContextSize: 64, Device: -1}, true, true)
			if err != nil {
				t.Fatal(err)
			}
			// the prefill body is recorded on its first use
			if _, err := vb.Forward(context.Background(), []int32{1, 2, 3, 4}, 0, false); err != nil {
				t.Fatal(err)
			}
			if vb.graph.decode == nil || vb.graph.prefill == nil {
				t.Fatal("no decode or prefill recording")
			}
			_, dec := layerDispatches(vb.graph.decode, shape.Layers)
			_, pre := layerDispatches(vb.graph.prefill, shape.Layers)
			vb.Close()
			t.Logf("%s, %d heads: layer 0 decode %d dispatches, prefill %d", typ, heads, dec[0], pre[0])
			counts = append(counts, [2]int{dec[0], pre[0]})
		}
		if counts[0] != counts[1] {
			t.Errorf("%s: layer 0's dispatches (decode, prefill) %v with 2 heads, %v with 8: they grow with the heads", typ, counts[0], counts[1])
		}
	}
}
