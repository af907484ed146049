package vk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/vk/vulkan"
)

// TestSeparateQKVShareABarrier: where Q, K and V are separate mat-vecs (a
// Q4_K_M file stores V in Q6_K), the decode step runs them back to back
// with no barrier between them, as they write disjoint rows of one buffer;
// under both layouts (the GPU one records them with the shared-x kernel).
func TestSeparateQKVShareABarrier(t *testing.T) {
	d := testDevice(t)
	p := filepath.Join(testenv.SharedDir(), "models", "synth-Q4_K_M.gguf")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s: %v", p, err)
	}
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuDeviceOrder}, {"gpu", gpuTuning}} {
		t.Run(tu.name, func(t *testing.T) {
			withTuning(t, d, tu.t)
			checkSeparateQKV(t, d, p)
		})
	}
}

func checkSeparateQKV(t *testing.T, d *gpu, p string) {
	m := loadModel(t, p)
	vb, err := newTestBackend(d, m, backend.Options{ContextSize: 32, Device: -1}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer vb.Close()
	r := vb.graph.decode
	labels := r.Recorded()
	separate := 0
	for l, lw := range vb.weights.layers {
		if !slices.ContainsFunc(lw, func(bw bound) bool { return len(bw.mats) == 3 }) {
			continue // Q, K and V stacked (or no attention)
		}
		separate++
		at := func(s string) int {
			return slices.IndexFunc(labels, func(m vulkan.KernelTime) bool { return m.Label == fmt.Sprintf("L%d %s", l, s) })
		}
		q, k, v := at("q"), at("k"), at("v")
		if q < 0 || k != q+1 || v != k+1 {
			t.Fatalf("layer %d: q, k, v at dispatches %d, %d, %d", l, q, k, v)
		}
		for _, n := range r.BarriersBefore() {
			if n == k || n == v {
				t.Errorf("layer %d: a barrier before dispatch %d (%s)", l, n, labels[n].Label)
			}
		}
	}
	if separate == 0 {
		t.Skipf("%s stacks Q, K and V in every layer", p)
	}
	t.Logf("%d layers with separate Q, K, V; %d dispatches and %d barriers per decode step", separate, r.Dispatches, r.Barriers)
}
