package engine

import (
	"context"
	"math"
	"testing"
)

// TestLogprobsAreTheModels: with a strong repeat penalty, the reported
// log-probabilities are the model's own (softmax of the logits before the
// penalty), checked against the logits recomputed for the same tokens; the
// penalised distribution differs by far more than the tolerance on the
// tokens the penalty pushed down, so the check can fail.
func TestLogprobsAreTheModels(t *testing.T) {
	ctx := context.Background()
	s := loadSession(t, "stories260K.gguf", "cpu")
	p := greedy()
	p.RepeatPenalty, p.RepeatLastN = 1.8, 64
	s.SetParams(p)
	evs, err := collect(t, s, ctx, Request{Messages: userMsg("Once upon a time"), MaxTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	toks, pre := tokenEvents(evs)
	prompt := make([]int32, 0, pre.Tokens+len(toks))
	prompt = append(prompt, s.tok.Encode("Once upon a time", true, false)...)

	fresh := loadSession(t, "stories260K.gguf", "cpu")
	v := fresh.model.Vocab
	ids := append([]int32(nil), prompt...)
	for _, tk := range toks {
		ids = append(ids, tk.ID)
	}
	all, err := fresh.be.Forward(ctx, ids[:len(ids)-1], 0, true)
	if err != nil {
		t.Fatal(err)
	}
	penalised, differs := 0, 0
	for k, tk := range toks {
		row := all[(len(prompt)-1+k)*v : (len(prompt)+k)*v]
		want := float64(row[tk.ID]) - logSumExp(row)
		if d := math.Abs(tk.LogProb - want); d > 1e-3 {
			t.Errorf("token %d (%d): logprob %.5f, the model's %.5f", k, tk.ID, tk.LogProb, want)
		}
		if tk.Funnel[0].Penalized == 0 {
			if tk.Top != nil {
				t.Errorf("token %d: Top set without penalties", k)
			}
			continue
		}
		penalised++
		if len(tk.Top) < 10 || tk.Top[0].Logprob < tk.Top[1].Logprob {
			t.Fatalf("token %d: top %v", k, tk.Top)
		}
		best := int32(0)
		for id := range int32(v) {
			if row[id] > row[best] {
				best = id
			}
		}
		if tk.Top[0].ID != best {
			t.Errorf("token %d: top[0] is %d, the model's likeliest %d", k, tk.Top[0].ID, best)
		}
		// What the sampler saw: Logit − LogZ after the penalty.
		for _, c := range tk.Candidates {
			if c.ID == tk.ID && math.Abs(float64(c.Logit)-tk.LogZ-want) > 0.01 {
				differs++
			}
		}
	}
	if penalised == 0 || differs == 0 {
		t.Fatalf("%d penalised steps, %d where the penalised logprob differs: the test checks nothing", penalised, differs)
	}
	t.Logf("%d of %d steps penalised, %d with a penalised logprob off by > 0.01", penalised, len(toks), differs)
}

func TestTopLogprobs(t *testing.T) {
	logits := []float32{1, 3, float32(math.NaN()), 3, 2, -1}
	z := logSumExp(logits)
	top := topLogprobs(logits, z, 3)
	want := []int32{1, 3, 4}
	for i, tl := range top {
		if tl.ID != want[i] || math.Abs(tl.Logprob-(float64(logits[tl.ID])-z)) > 1e-12 {
			t.Fatalf("top %v, want ids %v", top, want)
		}
	}
	sum := 0.0
	for _, l := range logits {
		if l == l {
			sum += math.Exp(float64(l) - z)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("softmax with logSumExp sums to %v", sum)
	}
}
