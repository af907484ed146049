package sample

import (
	"math"
	"testing"
)

// TestFunnel checks each stage's survivors and mass, and which stage cut
// each candidate, on a distribution whose probabilities are exact.
func TestFunnel(t *testing.T) {
	probs := logs(0.4, 0.3, 0.15, 0.1, 0.05)
	type want struct {
		left [6]int
		mass [6]float64
		cut  []Stage // by rank
	}
	cases := []struct {
		name string
		p    Params
		want want
	}{
		{"everything off", off(), want{
			[6]int{5, 5, 5, 5, 5, 1}, [6]float64{1, 1, 1, 1, 1, 0.4},
			[]Stage{StageNone, StageNone, StageNone, StageNone, StageNone}}},
		{"top-k 4", with(func(p *Params) { p.TopK = 4 }), want{
			[6]int{5, 4, 4, 4, 4, 1}, [6]float64{1, 0.95, 0.95, 0.95, 0.95, 0.4},
			[]Stage{StageNone, StageNone, StageNone, StageNone, StageTopK}}},
		// top-p 0.6 of the top-4 mass 0.95 is 0.57: reached by the second.
		{"top-k 4, top-p 0.6", with(func(p *Params) { p.TopK = 4; p.TopP = 0.6 }), want{
			[6]int{5, 4, 2, 2, 2, 1}, [6]float64{1, 0.95, 0.7, 0.7, 0.7, 0.4},
			[]Stage{StageNone, StageNone, StageTopP, StageTopP, StageTopK}}},
		// min-p 0.3 keeps p ≥ 0.12 (three tokens) after top-p 0.9 kept four:
		// the third... fourth token is cut by min-p, the fifth by top-p.
		{"top-p 0.9, min-p 0.3", with(func(p *Params) { p.TopP = 0.9; p.MinP = 0.3 }), want{
			[6]int{5, 5, 4, 3, 3, 1}, [6]float64{1, 1, 0.95, 0.85, 0.85, 0.4},
			[]Stage{StageNone, StageNone, StageNone, StageMinP, StageTopP}}},
		// min-p tighter than top-p: top-p alone would keep four.
		{"min-p 0.5 inside top-p", with(func(p *Params) { p.TopP = 0.9; p.MinP = 0.5 }), want{
			[6]int{5, 5, 4, 2, 2, 1}, [6]float64{1, 1, 0.95, 0.7, 0.7, 0.4},
			[]Stage{StageNone, StageNone, StageMinP, StageMinP, StageTopP}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Temperature = 0 // greedy: the draw is the first token
			res := Preview(tc.p, probs, nil)
			if len(res.Funnel) != 6 {
				t.Fatalf("%d stages, want 6", len(res.Funnel))
			}
			for i, f := range res.Funnel {
				if f.Stage != Stage(i+1) {
					t.Errorf("stage %d is %v", i, f.Stage)
				}
				if f.Left != tc.want.left[i] || !f.Exact {
					t.Errorf("%v: left %d (exact %v), want %d", f.Stage, f.Left, f.Exact, tc.want.left[i])
				}
				if math.Abs(f.Mass-tc.want.mass[i]) > 1e-6 {
					t.Errorf("%v: mass %.6f, want %.6f", f.Stage, f.Mass, tc.want.mass[i])
				}
			}
			for i, c := range res.Candidates {
				if c.CutBy != tc.want.cut[i] || c.Cut != (tc.want.cut[i] != StageNone) {
					t.Errorf("rank %d (id %d): cut by %v (Cut %v), want %v", i, c.ID, c.CutBy, c.Cut, tc.want.cut[i])
				}
			}
			if lp := res.TokenLogProb(); math.Abs(lp-math.Log(0.4)) > 1e-6 {
				t.Errorf("TokenLogProb %.6f, want ln 0.4 = %.6f", lp, math.Log(0.4))
			}
		})
	}
}

// TestFunnelPenalties: the penalties stage counts the distinct tokens it
// pushed down and leaves every token in.
func TestFunnelPenalties(t *testing.T) {
	p := off()
	p.RepeatPenalty = 1.5
	res := Preview(p, logs(0.4, 0.3, 0.15, 0.1, 0.05), []int32{1, 1, 3})
	f := res.Funnel[0]
	if f.Stage != StagePenalties || !f.Active || f.Penalized != 2 || f.Left != 5 {
		t.Fatalf("penalties stage %+v, want active, 2 penalized, 5 left", f)
	}
	if res.Funnel[1].Active {
		t.Errorf("top-k is off but reported active")
	}
}

// TestForce: a forced token is reported as chosen with the same
// candidates a draw would show, and the generator is not advanced.
func TestForce(t *testing.T) {
	logits := logs(0.4, 0.3, 0.15, 0.1, 0.05)
	p := Defaults()
	a, b := New(p), New(p)
	res, err := a.Force(logits, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Funnel[5].Stage != StageForced || math.Abs(res.Funnel[5].Mass-0.1) > 1e-6 {
		t.Errorf("last funnel stage %+v, want forced with the token's probability 0.1", res.Funnel[5])
	}
	if res.Token != 3 || math.Abs(res.TokenLogProb()-math.Log(0.1)) > 1e-6 {
		t.Fatalf("forced token %d logprob %.4f, want 3 and ln 0.1", res.Token, res.TokenLogProb())
	}
	want := Preview(p, logits, nil)
	for i, c := range res.Candidates {
		if c != want.Candidates[i] {
			t.Errorf("candidate %d: %+v, preview has %+v", i, c, want.Candidates[i])
		}
	}
	// Both samplers must now draw the same sequence.
	for i := range 20 {
		if x, y := a.Sample(logits, nil).Token, b.Sample(logits, nil).Token; x != y {
			t.Fatalf("draw %d after Force: %d, untouched sampler %d", i, x, y)
		}
	}
	if _, err := a.Force(logits, nil, 5); err == nil {
		t.Errorf("forcing a token outside the vocabulary gave no error")
	}
	h := Head{IDs: []int32{0, 1, 2}, Logits: logits[:3], Max: logits[0], Z: 1 / 0.4, Entropy: 1}
	if _, ok := a.ForceHead(h, 4); ok {
		t.Errorf("ForceHead accepted a token outside the head")
	}
	if r, ok := a.ForceHead(h, 2); !ok || r.Token != 2 {
		t.Errorf("ForceHead(2) = %d, %v", r.Token, ok)
	}
}
