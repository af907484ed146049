package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/gguf"
	"vkchat/runtime/plan"
)

// TestInfoPlan: `vkchat info --plan` ends with the model's plan at the
// context it reports, one group of lines per layer; without --plan no plan.
func TestInfoPlan(t *testing.T) {
	for _, c := range []struct {
		model string
		want  []string
	}{
		{"stories260K.gguf", []string{"plan llama · ctx 64 ·", "layer 4 · attention", "writes and reads cache slot 4"}},
		{"2026/synth-gemma4-F32.gguf", []string{"plan gemma4 · ctx 64 ·", "reads cache slot 3 (shared)", "ple-inputs", "softcap"}},
		{"2026/synth-qwen35-F32.gguf", []string{"layer 0 · deltanet", "layer 3 · attention", "attn-gate", "state slots (F32"}},
	} {
		t.Run(c.model, func(t *testing.T) {
			path := testenv.Model(t, c.model)
			var out, plain bytes.Buffer
			if err := runInfo(context.Background(), []string{"--ctx", "64", "--plan", path}, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if err := runInfo(context.Background(), []string{"--ctx", "64", path}, &plain, io.Discard); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := arch.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Resolve(m, 64)
			if err != nil {
				t.Fatal(err)
			}
			if want := plain.String() + "\n" + p.String(); out.String() != want {
				t.Errorf("info --plan is not info followed by the plan:\n%s", out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("missing %q", w)
				}
			}
			if strings.Contains(plain.String(), "plan ") {
				t.Errorf("info without --plan prints a plan:\n%s", plain.String())
			}
		})
	}
}

// TestInfoKVType: `vkchat info --kv-type` sizes the cache in that type
// (q8_0's 34 B and q4_0's 18 B a block of 32, keys and values apart with
// --kv-type-k/-v) beside what f16 would take, and refuses a quantized
// type where a head is not whole blocks (the demo model's 8).
func TestInfoKVType(t *testing.T) {
	path := testenv.Model(t, "synth-qwen3-F32.gguf")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kv-type", "q8_0"}, "KV cache:        q8_0: 2 layers × 512 ctx × 2 kv heads × 128 head dim × 2 (K,V) × 34/32 B = 557056 B"},
		{[]string{"--kv-type", "q4_0"}, "KV cache:        q4_0: 2 layers × 512 ctx × 2 kv heads × 128 head dim × 2 (K,V) × 18/32 B = 294912 B"},
		{[]string{"--kv-type-k", "q8_0"}, "KV cache:        q8_0/f16: 2 layers × 512 ctx × 2 kv heads × 128 head dim × (34/32 B + 2 B) (K+V) = 802816 B"},
		{nil, "KV cache:        f16: 2 layers × 512 ctx × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 1048576 B"},
	} {
		var out bytes.Buffer
		if err := runInfo(context.Background(), append([]string{"--ctx", "512", path}, c.args...), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.want+"\n") {
			t.Errorf("%v: no line %q in\n%s", c.args, c.want, out.String())
		}
		if quantized := c.args != nil; quantized != strings.Contains(out.String(), "KV in f16:       1.0 MiB, for comparison") {
			t.Errorf("%v: the f16 comparison line shown %v", c.args, !quantized)
		}
	}
	err := runInfo(context.Background(), []string{"--model", "demo", "--kv-type", "q8_0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "head size is 8") {
		t.Errorf("q8_0 on the demo model: %v, want a refusal naming the head size", err)
	}
}
