package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
)

// TestEvalMTP: `vkchat eval --mtp --json` lays each step's token, next
// token and MTP top out as shared/reference/2026b/synth-qwen35mtp-F32.json
// does, with the same main tops as plain eval and the reference's draft
// logits within 0.01; a backend without the head says so.
func TestEvalMTP(t *testing.T) {
	model := testenv.Model(t, "2026b/synth-qwen35mtp-F32.gguf")
	data, err := os.ReadFile(testenv.Shared(t, "reference/2026b/synth-qwen35mtp-F32.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref engine.EvalResult
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	args := []string{"--backend", "cpu", "--model", model, "--prompt", ref.Prompt, "-n", "16", "--json"}
	var mtpOut, plainOut bytes.Buffer
	if err := runEval(context.Background(), append([]string{"--mtp"}, args...), &mtpOut, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runEval(context.Background(), args, &plainOut, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got, plain engine.EvalResult
	if err := json.Unmarshal(mtpOut.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(plainOut.Bytes(), &plain); err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != len(plain.Steps) || len(got.Steps) != len(ref.PromptTokens)+16 || len(got.MTPPos0Top) != 10 {
		t.Fatalf("%d steps (plain eval %d), row 0 top of %d", len(got.Steps), len(plain.Steps), len(got.MTPPos0Top))
	}
	worst := 0.0
	// by id, as near ties may order two candidates either way; an id
	// missing from the top must sit at the edge of it
	check := func(where string, top, want [][3]float64) {
		if want[0][1]-want[1][1] > 0.01 && top[0][0] != want[0][0] {
			t.Errorf("%s: MTP top-1 is id %v, llama.cpp's %v", where, top[0][0], want[0][0])
		}
		for _, w := range want {
			d := math.Abs(top[len(top)-1][1] - w[1])
			for _, c := range top {
				if c[0] == w[0] {
					d = math.Abs(c[1] - w[1])
				}
			}
			worst = math.Max(worst, d)
		}
	}
	check("row 0", got.MTPPos0Top, ref.MTPPos0Top)
	for i, st := range got.Steps {
		rs := ref.Steps[i]
		if st.Token == nil || st.NextToken == nil || *st.Token != *rs.Token || *st.NextToken != *rs.NextToken {
			t.Fatalf("step %d: token/next %v/%v, reference %d/%d", i, st.Token, st.NextToken, *rs.Token, *rs.NextToken)
		}
		for j := range st.Top {
			if st.Top[j] != plain.Steps[i].Top[j] {
				t.Fatalf("step %d: main top %v, plain eval %v", i, st.Top[j], plain.Steps[i].Top[j])
			}
		}
		check(fmt.Sprintf("step %d", i), st.MTPTop, rs.MTPTop)
	}
	if worst > 0.01 {
		t.Errorf("MTP logits up to %.3g from llama.cpp's, want ≤ 0.01", worst)
	}
	err = runEval(context.Background(), []string{"--backend", "cpu", "--model", "demo", "--prompt", "Once", "-n", "1", "--mtp"}, io.Discard, io.Discard)
	if !errors.Is(err, engine.ErrNoMTP) {
		t.Errorf("a model without a head: %v, want ErrNoMTP", err)
	}
	err = runEval(context.Background(), []string{"--backend", "vulkan", "--model", model, "--prompt", "Once", "-n", "1", "--mtp"}, io.Discard, io.Discard)
	switch {
	case errors.Is(err, engine.ErrNoMTP):
		t.Errorf("vulkan: %v, want the head run", err)
	case err != nil:
		t.Skipf("vulkan: %v (no device here)", err)
	}
}
