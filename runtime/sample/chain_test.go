package sample

import (
	"math"
	"slices"
	"testing"
)

// softmax64 is the reference softmax, in float64 with the maximum
// subtracted, written independently of the code under test.
func softmax64(xs []float64) []float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	out := make([]float64, len(xs))
	sum := 0.0
	for i, x := range xs {
		out[i] = math.Exp(x - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

func entropy64(ps []float64) float64 {
	h := 0.0
	for _, p := range ps {
		if p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

func logs(ps ...float64) []float32 {
	out := make([]float32, len(ps))
	for i, p := range ps {
		out[i] = float32(math.Log(p))
	}
	return out
}

// expectFinal is the distribution the chain should sample from: softmax
// at temperature t over the kept ids only.
func expectFinal(logits []float32, kept []int32, t float64) map[int32]float64 {
	xs := make([]float64, len(kept))
	for i, id := range kept {
		xs[i] = float64(logits[id]) / t
	}
	ps := softmax64(xs)
	out := map[int32]float64{}
	for i, id := range kept {
		out[id] = ps[i]
	}
	return out
}

func off() Params {
	return Params{Temperature: 1, TopP: 1, RepeatPenalty: 1, RepeatLastN: 64, Seed: 1}
}

func with(f func(*Params)) Params {
	p := off()
	f(&p)
	return p
}

// TestChainDistributions checks Prob, Final, Cut and Entropy against
// hand-derived kept sets and float64 reference softmaxes.
func TestChainDistributions(t *testing.T) {
	probs := logs(0.5, 0.3, 0.15, 0.05) // full softmax is exactly these
	six := []float32{1.5, -0.25, 3, 0.75, 2.25, 0}
	cases := []struct {
		name   string
		logits []float32
		p      Params
		kept   []int32 // hand-derived survivors
	}{
		{"all kept, T=1", six, off(), []int32{0, 1, 2, 3, 4, 5}},
		{"temperature 0.5 sharpens", six, with(func(p *Params) { p.Temperature = 0.5 }), []int32{0, 1, 2, 3, 4, 5}},
		{"temperature 2 flattens", six, with(func(p *Params) { p.Temperature = 2 }), []int32{0, 1, 2, 3, 4, 5}},
		{"top-k 3", six, with(func(p *Params) { p.TopK = 3 }), []int32{2, 4, 0}},
		{"top-k 1", six, with(func(p *Params) { p.TopK = 1 }), []int32{2}},
		{"top-k above vocab", six, with(func(p *Params) { p.TopK = 100 }), []int32{0, 1, 2, 3, 4, 5}},
		// cumulative 0.5, 0.8: 0.75 is reached by the second token.
		{"top-p 0.75", probs, with(func(p *Params) { p.TopP = 0.75 }), []int32{0, 1}},
		{"top-p 0.85", probs, with(func(p *Params) { p.TopP = 0.85 }), []int32{0, 1, 2}},
		{"top-p 0.1 keeps one", probs, with(func(p *Params) { p.TopP = 0.1 }), []int32{0}},
		// After top-k 3 the mass renormalises to 0.526, 0.842: top-p 0.82
		// stops at two tokens, while alone it would need three.
		{"top-p 0.82 alone", probs, with(func(p *Params) { p.TopP = 0.82 }), []int32{0, 1, 2}},
		{"top-k 3 then top-p 0.82", probs, with(func(p *Params) { p.TopK = 3; p.TopP = 0.82 }), []int32{0, 1}},
		// min-p keeps p ≥ minp·0.5.
		{"min-p 0.2", probs, with(func(p *Params) { p.MinP = 0.2 }), []int32{0, 1, 2}},
		{"min-p 0.5", probs, with(func(p *Params) { p.MinP = 0.5 }), []int32{0, 1}},
		{"min-p 1 keeps the max", probs, with(func(p *Params) { p.MinP = 1 }), []int32{0}},
		{"min-p with top-k", probs, with(func(p *Params) { p.TopK = 2; p.MinP = 0.05 }), []int32{0, 1}},
		// Temperature comes last: it must not change which tokens top-p
		// and min-p keep, only their final weights.
		{"top-p then temperature 3", probs, with(func(p *Params) { p.TopP = 0.85; p.Temperature = 3 }), []int32{0, 1, 2}},
		{"min-p then temperature 0.3", probs, with(func(p *Params) { p.MinP = 0.2; p.Temperature = 0.3 }), []int32{0, 1, 2}},
		// Full probabilities .529 .250 .118 .056 .026 .021: top-p 0.95 is
		// reached at the fourth token.
		{"defaults", six, Defaults(), []int32{2, 4, 0, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Preview(tc.p, tc.logits, nil)
			checkAgainstReference(t, res, tc.logits, tc.kept, float64(tc.p.Temperature), min(max(tc.p.TopK, 10), 40))
		})
	}
}

func checkAgainstReference(t *testing.T, res Result, logits []float32, kept []int32, temp float64, n int) {
	t.Helper()
	xs := make([]float64, len(logits))
	for i, l := range logits {
		xs[i] = float64(l)
	}
	full := softmax64(xs)
	final := expectFinal(logits, kept, temp)

	want := min(n, len(logits))
	if len(res.Candidates) != want {
		t.Fatalf("%d candidates, want %d", len(res.Candidates), want)
	}
	const tol = 1e-6
	for i, c := range res.Candidates {
		if i > 0 && c.Prob > res.Candidates[i-1].Prob {
			t.Errorf("candidates not sorted by Prob at %d", i)
		}
		if c.Logit != logits[c.ID] {
			t.Errorf("id %d: Logit %v, want %v", c.ID, c.Logit, logits[c.ID])
		}
		if d := math.Abs(float64(c.Prob) - full[c.ID]); d > tol {
			t.Errorf("id %d: Prob %v, want %v", c.ID, c.Prob, full[c.ID])
		}
		wantFinal, isKept := final[c.ID]
		if c.Cut == isKept {
			t.Errorf("id %d: Cut %v, want %v", c.ID, c.Cut, !isKept)
		}
		if d := math.Abs(float64(c.Final) - wantFinal); d > tol {
			t.Errorf("id %d: Final %v, want %v", c.ID, c.Final, wantFinal)
		}
	}
	if d := math.Abs(float64(res.Entropy) - entropy64(full)); d > tol {
		t.Errorf("Entropy %v, want %v", res.Entropy, entropy64(full))
	}
	if !slices.Contains(kept, res.Token) {
		t.Errorf("Token %d not among kept %v", res.Token, kept)
	}
}

func TestCandidateCount(t *testing.T) {
	big := make([]float32, 1000)
	for i := range big {
		big[i] = float32(i%97) / 10
	}
	cases := []struct {
		topK   int
		vocab  int
		wantsN int
	}{
		{0, 1000, 10},
		{5, 1000, 10},
		{25, 1000, 25},
		{40, 1000, 40},
		{500, 1000, 40},
		{0, 7, 7},
		{25, 3, 3},
	}
	for _, tc := range cases {
		res := Preview(with(func(p *Params) { p.TopK = tc.topK }), big[:tc.vocab], nil)
		if len(res.Candidates) != tc.wantsN {
			t.Errorf("topK %d vocab %d: %d candidates, want %d", tc.topK, tc.vocab, len(res.Candidates), tc.wantsN)
		}
	}
}

func TestEmptyVocabulary(t *testing.T) {
	if res := New(Defaults()).Sample(nil, []int32{1, 2}); res.Token != -1 || len(res.Candidates) != 0 {
		t.Fatalf("got %+v, want Token -1 and no candidates", res)
	}
	if res := Preview(Defaults(), []float32{}, nil); res.Token != -1 {
		t.Fatalf("Preview: got %+v", res)
	}
}
