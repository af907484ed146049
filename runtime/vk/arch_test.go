package vk

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// archNames are the architectures with synth-<arch> files in ../shared.
var archNames = []string{"qwen3", "gemma2", "gemma3", "phi3", "smollm3", "olmo2", "granite"}

// archNMSE bounds the logits NMSE between the backends per weight type.
// F32: float summation order only, measured 1.5e-12 (granite) to 7.1e-7
// (gemma3). Q8_0: llama.cpp's 8-bit activations, which both backends round
// the same way, turn one-ulp differences upstream into whole quantization
// steps on these random weights: measured 2.9e-6 (granite) to 4.9e-4
// (gemma3), as plain llama's synth-Q8_0 does (1.2e-4 on the same prompt).
var archNMSE = map[string]float64{"F32": 5e-6, "Q8_0": 1e-3}

// TestArchsMatchCPU runs every synth-<arch> file (F32 and Q8_0) on both
// backends: the prompt as one batch longer than gemma3's 8-position window
// and gemma2's, then decode steps, each compared by logits NMSE. The
// per-op tests check each kernel; this checks the recipe's wiring (which
// norm, scale, table and cache each layer gets). llama.cpp's own logits are
// TestArchsMatchLlamaCpp's job in runtime/engine.
func TestArchsMatchCPU(t *testing.T) {
	testDevice(t)
	prompt := make([]int32, 21)
	for i := range prompt {
		prompt[i] = int32(1 + (i*37)%500)
	}
	for _, arch := range archNames {
		for _, typ := range []string{"F32", "Q8_0"} {
			name := fmt.Sprintf("synth-%s-%s.gguf", arch, typ)
			t.Run(name, func(t *testing.T) {
				p := testenv.Shared(t, filepath.Join("models", name))
				e := compareLogits(t, p, prompt, 12, backend.KVF16, true)
				bound := archNMSE[typ]
				if e > bound {
					t.Errorf("logits NMSE %.3g over %.0e", e, bound)
				} else {
					t.Logf("worst logits NMSE %.3g", e)
				}
			})
		}
	}
}

// TestWindowRingRewind runs gemma3 (8-position windows on five layers of
// six) past its rings' size, then rewinds twice: once within what the rings
// hold and once past it, which replays the kept tokens. Every step's logits
// are compared with the reference backend doing the same.
func TestWindowRingRewind(t *testing.T) {
	testDevice(t)
	m := loadModel(t, testenv.Shared(t, filepath.Join("models", "synth-gemma3-F32.gguf")))
	opts := backend.Options{ContextSize: 256, Device: -1}
	vb := newVulkan(t, m, opts)
	cb, err := cpuFor(t, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	mem := vb.Memory()
	if r := mem.KVRings; len(r) != 1 || r[0].Window != 8+prefillChunk-1 || r[0].Layers != 5 {
		t.Fatalf("rings %+v, want 5 layers of %d positions", r, 8+prefillChunk-1)
	}
	// 1 full layer of 256 and 5 rings of 71, 2×(K,V) f16 rows of kv_heads×head_dim
	row := int64(2 * m.KVHeads * m.HeadDim * 2)
	if want := (256 + 5*int64(8+prefillChunk-1)) * row; mem.KVAllocated != want {
		t.Errorf("KV allocated %d bytes, want %d", mem.KVAllocated, want)
	}
	if want := fmt.Sprintf("(1 layer × 256 ctx + 5 layers × %d ring (window 8 + %d))", 8+prefillChunk-1, prefillChunk-1); !strings.Contains(mem.KVFormula, want) ||
		!strings.HasSuffix(mem.KVFormula, fmt.Sprintf("= %d B", mem.KVAllocated)) {
		t.Errorf("KV formula %q, want it to start %q and end in the allocated bytes", mem.KVFormula, want)
	}
	if used, want := mem.KVUsedAt(200), (200+5*int64(8+prefillChunk-1))*row; used != want {
		t.Errorf("KV used after 200 positions %d, want %d", used, want)
	}
	toks := make([]int32, 110)
	for i := range toks {
		toks[i] = int32(1 + (i*53)%500)
	}
	ctx := context.Background()
	step := func(what string, tokens []int32, pos int) {
		t.Helper()
		ref, err := cb.Forward(ctx, tokens, pos, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := vb.Forward(ctx, tokens, pos, false)
		if err != nil {
			t.Fatal(err)
		}
		if e := nmse(ref, got); e > archNMSE["F32"] {
			t.Errorf("%s at %d: logits NMSE %.3g over %.0e", what, pos, e, archNMSE["F32"])
		}
	}
	step("prefill", toks[:100], 0)
	for p := 100; p < 110; p++ {
		step("decode", toks[p:p+1], p)
	}
	// the rings hold 39..109: a step at 60 sees 53..60
	step("rewind within the rings", []int32{7, 8}, 60)
	// a step at 20 sees 13..20, overwritten: replayed from history
	step("rewind past the rings", []int32{9}, 20)
	step("decode after the replay", []int32{10}, 21)
}
