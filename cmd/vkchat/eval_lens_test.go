package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// TestEvalLens: `vkchat eval --lens --json` prints the lens in the
// reference files' shape, a layer group per prompt position whose last
// layer is what plain eval prints for that position; the Vulkan backend
// refuses it by name.
func TestEvalLens(t *testing.T) {
	args := []string{"--backend", "cpu", "--model", "demo", "--prompt", "Once upon a time", "--top", "4", "--json"}
	var lensOut, plainOut bytes.Buffer
	if err := runEval(context.Background(), append([]string{"--lens"}, args...), &lensOut, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runEval(context.Background(), append([]string{"-n", "0"}, args...), &plainOut, io.Discard); err != nil {
		t.Fatal(err)
	}
	var lens engine.LensResult
	var plain engine.EvalResult
	if err := json.Unmarshal(lensOut.Bytes(), &lens); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(plainOut.Bytes(), &plain); err != nil {
		t.Fatal(err)
	}
	if lens.Layers != 5 || len(lens.Positions) != len(plain.PromptTokens) || len(plain.Steps) != len(plain.PromptTokens) {
		t.Fatalf("%d layers, %d positions for %d prompt tokens", lens.Layers, len(lens.Positions), len(plain.PromptTokens))
	}
	for p, pos := range lens.Positions {
		if len(pos.Layers) != lens.Layers || pos.Token != plain.PromptTokens[p] {
			t.Fatalf("position %d: %d layers, token %d", p, len(pos.Layers), pos.Token)
		}
		last := pos.Layers[lens.Layers-1].Top
		for j, e := range plain.Steps[p].Top {
			if last[j] != e {
				t.Errorf("position %d: last layer's lens %v, eval %v", p, last[j], e)
			}
		}
	}
	var stderr bytes.Buffer
	err := runEval(context.Background(), []string{"--backend", "vulkan", "--model", "demo", "--prompt", "Once", "--lens"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "logit lens") {
		t.Skipf("vulkan: %v (no device here, or it gained the lens)", err)
	}
}
