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
