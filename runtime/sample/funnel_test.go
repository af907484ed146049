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
