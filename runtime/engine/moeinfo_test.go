package engine

import (
	"context"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// TestMoEInfo: a mixture-of-experts model says its expert counts, reads
// fewer weights per token than it holds, and each generated token carries
// the routing of every layer (k experts, most weight first, summing to 1);
// a dense model says none of it.
func TestMoEInfo(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := Load(context.Background(), testenv.Model(t, "2026/synth-qwen3moe-F32.gguf"), Options{Backend: "cpu", ContextSize: 64, Template: "none", Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, st := s.Info(), s.Stats()
	if info.Experts != 8 || info.ExpertsUsed != 2 {
		t.Errorf("experts %d used %d, want 8 and 2", info.Experts, info.ExpertsUsed)
	}
	if !(st.WeightsActive > 0 && st.WeightsActive < st.Weights) || st.ActiveFormula == "" {
		t.Errorf("weights %d active %d formula %q", st.Weights, st.WeightsActive, st.ActiveFormula)
	}
	var toks []TokenInfo
	err = s.Generate(context.Background(), Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "Once upon a time"}}, MaxTokens: 2}, func(e Event) {
		if e.Token != nil {
			toks = append(toks, *e.Token)
		}
	})
	if err != nil || len(toks) == 0 {
		t.Fatalf("generate: %v, %d tokens", err, len(toks))
	}
	for _, tok := range toks {
		if len(tok.Experts) != info.Layers {
			t.Fatalf("token %d: routing of %d layers, want %d", tok.Index, len(tok.Experts), info.Layers)
		}
		for _, r := range tok.Experts {
			if len(r.Experts) != info.ExpertsUsed || len(r.Weights) != info.ExpertsUsed {
				t.Errorf("token %d: routing %+v, want %d experts", tok.Index, r, info.ExpertsUsed)
			}
		}
	}

	d, err := Load(context.Background(), testenv.Model(t, "stories260K.gguf"), Options{Backend: "cpu", ContextSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if i, st := d.Info(), d.Stats(); i.Experts != 0 || i.ExpertsUsed != 0 || st.WeightsActive != st.Weights || st.ActiveFormula != "" {
		t.Errorf("dense model: experts %d/%d, active %d of %d, formula %q", i.ExpertsUsed, i.Experts, st.WeightsActive, st.Weights, st.ActiveFormula)
	}
}
