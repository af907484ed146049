package vk

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// gpuArchNMSE bounds the synth-<arch> F32 logits' NMSE against the
// reference backend under the GPU layout, whose attention sums positions in
// another order than llama.cpp's (and so moves F16 roundings).
// Measured 1.3e-6 (gemma2) and 2.0e-7 (qwen3) on lavapipe.
const gpuArchNMSE = 1e-5

// withTuning lays the shared device's kernels out as tu for the rest of the
// test: pipelines are keyed by their constants, so both layouts coexist.
func withTuning(t testing.TB, d *gpu, tu tuning) {
	t.Helper()
	old := d.tune
	d.tune = tu
	t.Cleanup(func() { d.tune = old })
}

// cpuDeviceOrder is the CPU layout with quantized products in its
// kernels' own orders (the tiled prefill product, the grouped expert
// product, the register mat-vec) rather than the exact kernel that a CPU
// device takes by default (tuning.cpuRounding): for the tests of those
// kernels' choice and dispatches on that layout.
var cpuDeviceOrder = func() tuning {
	t := cpuTuning
	t.cpuRounding = false
	return t
}()

// TestGPULayoutMatchesCPU runs the layout chosen for GPUs (the shared-x
// mat-vec with K never split, position-parallel and split-K attention, the
// next-token head on the device) on whatever device the tests have: on
// lavapipe this is the only place those code paths run before they meet a
// real GPU.
func TestGPULayoutMatchesCPU(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, gpuTuning)
	stories := testenv.Model(t, "stories260K.gguf")

	t.Run("stories logits", func(t *testing.T) {
		long := make([]int32, prefillChunk+9)
		for i := range long {
			long[i] = int32(1 + (i*41)%500)
		}
		bound := storiesNMSE(d)
		if e := compareLogits(t, stories, long, 4, backend.KVF16, true); e > bound {
			t.Errorf("logits NMSE %.3g over %.0e", e, bound)
		} else {
			t.Logf("worst logits NMSE %.3g", e)
		}
	})

	// Prefill too: the shared-x kernel takes as many tokens per pass as
	// shared memory holds, another layout to check; and decode again with
	// the integer-dot mat-vec (off in the layout until a GPU measures it).
	for _, c := range []struct {
		name string
		tu   tuning
	}{{"synth Q4_0 logits", gpuTuning}, {"synth Q4_0 logits, int-dot", gpuIntDot}} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(testenv.SharedDir(), "models", "synth-Q4_0.gguf")
			if _, err := os.Stat(p); err != nil {
				t.Skipf("no %s: %v", p, err)
			}
			withTuning(t, d, c.tu)
			e := compareLogits(t, p, []int32{1, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}, 3, backend.KVF16, true)
			t.Logf("worst logits NMSE %.3g", e)
			if e > 5e-3 {
				t.Errorf("logits NMSE %.3g over 5e-3", e)
			}
		})
	}

	// The recipe's kernels under the GPU layout: gemma2 (sliding window on
	// alternate layers, attention and final soft-caps, post-norms, GELU,
	// Q scale) and qwen3 (per-head Q/K norms, head_dim ≠ embd/heads), a
	// prompt longer than the window, then decode steps; and the device
	// head, which must see the logits after the final soft-cap.
	for _, arch := range []string{"gemma2", "qwen3"} {
		t.Run("synth-"+arch+" logits", func(t *testing.T) {
			// split-K decode attention in granules of 4 positions and
			// tiles of 16, so these short contexts take several splits
			// (some recorded past the span) and prefill several tiles
			small := gpuTuning
			small.attnGran, small.attnLanes = 4, 16
			withTuning(t, d, small)
			p := testenv.Shared(t, filepath.Join("models", "synth-"+arch+"-F32.gguf"))
			prompt := make([]int32, 21)
			for i := range prompt {
				prompt[i] = int32(1 + (i*37)%500)
			}
			e := compareLogits(t, p, prompt, 6, backend.KVF16, true)
			if e > gpuArchNMSE {
				t.Errorf("logits NMSE %.3g over %.0e", e, gpuArchNMSE)
			} else {
				t.Logf("worst logits NMSE %.3g", e)
			}
			m := loadModel(t, p)
			opts := backend.Options{ContextSize: 64, Device: -1}
			cb, err := cpuFor(t, m, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cb.Close()
			ref, err := cb.Forward(context.Background(), prompt, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			hb := newVulkan(t, m, opts).(backend.HeadBackend)
			h, ok, err := hb.ForwardHead(context.Background(), prompt, 0, 4)
			if err != nil || !ok {
				t.Fatalf("head: ok %v, %v", ok, err)
			}
			best := argmax(ref)
			if int(h.IDs[0]) != best || math.Abs(float64(h.Logits[0]-ref[best])) > 5e-3 { // the F32 bound against llama.cpp
				t.Errorf("head's best %d (%g), the reference's %d (%g)", h.IDs[0], h.Logits[0], best, ref[best])
			}
		})
	}

	t.Run("greedy through the head", func(t *testing.T) {
		ref := loadReference(t, "stories260K.p1.json")
		b := newVulkan(t, loadModel(t, stories), backend.Options{ContextSize: 512, Device: -1})
		hb, ok := b.(backend.HeadBackend)
		if !ok || hb.MaxHead() == 0 {
			t.Fatalf("the GPU layout does not offer the device head (MaxHead %d)", hb.MaxHead())
		}
		ctx := context.Background()
		logits, err := b.Forward(ctx, ref.PromptTokens, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		next := int32(argmax(logits))
		pos := len(ref.PromptTokens)
		for i, want := range ref.Greedy {
			if next != want {
				t.Fatalf("greedy token %d: got %d, llama.cpp %d", i, next, want)
			}
			h, ok, err := hb.ForwardHead(ctx, []int32{next}, pos, 8)
			if err != nil {
				t.Fatal(err)
			}
			if !ok || len(h.IDs) == 0 {
				t.Fatalf("step %d: the head overflowed or came back empty (%d ids)", i, len(h.IDs))
			}
			next = h.IDs[0]
			pos++
		}
	})
}

// TestStagingMatchesCPU runs stories260K on a device whose device-local
// memory is left unmapped, as on a discrete GPU without resizable BAR:
// weights go up and the KV cache and activations stay behind the staging
// copies. lavapipe maps everything, so nothing else runs this path.
func TestStagingMatchesCPU(t *testing.T) {
	testDevice(t) // skips without Vulkan
	d, err := openGPU(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	d.Unmapped = true
	m := loadModel(t, testenv.Model(t, "stories260K.gguf"))
	opts := backend.Options{ContextSize: 64, Device: -1}
	vb, err := newTestBackend(d, m, opts, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer vb.Close()
	if !d.Staged() {
		t.Fatal("the weights were uploaded without the staging buffer")
	}
	if vb.act.x.Mapped() != nil || vb.cache.kc[0].Mapped() != nil {
		t.Fatal("device-local buffers are mapped")
	}
	cb, err := cpuFor(t, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	ctx := context.Background()
	prompt := []int32{1, 403, 407, 261, 378, 285, 414, 270, 284, 453}
	ref, err := cb.Forward(ctx, prompt, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := vb.Forward(ctx, prompt, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(ref, got); e > storiesNMSE(d) {
		t.Errorf("logits NMSE %.3g over %.0e", e, storiesNMSE(d))
	}
	// Read a device-local buffer back through staging: the last token's
	// activations after the pass are the hidden state, not zeros.
	raw := make([]byte, 4*m.Config.Embd)
	if err := vb.act.x.Read(0, raw); err != nil {
		t.Fatal(err)
	}
	nonzero := 0
	for _, v := range bytesF32(raw) {
		if v != 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Error("activations read back through staging are all zero")
	}
}
