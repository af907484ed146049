package sample

import (
	"math"
	"testing"
)

func TestPenalties(t *testing.T) {
	base := []float32{2, -1, 0.5, 3, 0}
	cases := []struct {
		name    string
		p       Params
		history []int32
		want    []float32 // penalised logits, computed by hand
	}{
		{
			name:    "repeat divides positive, multiplies negative",
			p:       with(func(p *Params) { p.RepeatPenalty = 2 }),
			history: []int32{0, 1, 4},
			want:    []float32{1, -2, 0.5, 3, 0},
		},
		{
			name:    "repeat counts a token once however often it appears",
			p:       with(func(p *Params) { p.RepeatPenalty = 2 }),
			history: []int32{3, 3, 3},
			want:    []float32{2, -1, 0.5, 1.5, 0},
		},
		{
			name:    "presence once, frequency per occurrence",
			p:       with(func(p *Params) { p.PresencePenalty = 0.5; p.FrequencyPenalty = 0.25 }),
			history: []int32{0, 0, 1, 3, 0},
			// 0: 2 − (3·0.25 + 0.5); 1 and 3: − (0.25 + 0.5)
			want: []float32{0.75, -1.75, 0.5, 2.25, 0},
		},
		{
			name:    "all three, repeat first",
			p:       with(func(p *Params) { p.RepeatPenalty = 2; p.PresencePenalty = 0.5; p.FrequencyPenalty = 0.25 }),
			history: []int32{0, 0, 1},
			// 0: 2/2 − (0.5 + 0.5); 1: −1·2 − 0.75
			want: []float32{0, -2.75, 0.5, 3, 0},
		},
		{
			name:    "window covers only the last RepeatLastN",
			p:       with(func(p *Params) { p.RepeatPenalty = 2; p.RepeatLastN = 2 }),
			history: []int32{0, 1, 2, 3, 3},
			want:    []float32{2, -1, 0.5, 1.5, 0},
		},
		{
			name:    "RepeatLastN 0 turns penalties off",
			p:       with(func(p *Params) { p.RepeatPenalty = 2; p.PresencePenalty = 1; p.RepeatLastN = 0 }),
			history: []int32{0, 1, 2, 3},
			want:    base,
		},
		{
			name:    "negative RepeatLastN uses the whole history",
			p:       with(func(p *Params) { p.RepeatPenalty = 2; p.RepeatLastN = -1 }),
			history: append([]int32{0}, make([]int32, 200)...), // token 0 many times, id 0
			want:    []float32{1, -1, 0.5, 3, 0},
		},
		{
			name:    "ids outside the vocabulary are ignored",
			p:       with(func(p *Params) { p.RepeatPenalty = 2 }),
			history: []int32{-1, 5, 1 << 30, 2},
			want:    []float32{2, -1, 0.25, 3, 0},
		},
		{
			name:    "negative presence encourages",
			p:       with(func(p *Params) { p.PresencePenalty = -1 }),
			history: []int32{1},
			want:    []float32{2, 0, 0.5, 3, 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logits := append([]float32(nil), base...)
			res := Preview(tc.p, logits, tc.history)
			for i := range logits {
				if logits[i] != base[i] {
					t.Fatalf("input logits modified: %v", logits)
				}
			}
			got := map[int32]float32{}
			for _, c := range res.Candidates {
				got[c.ID] = c.Logit
			}
			want64 := make([]float64, len(tc.want))
			for i, w := range tc.want {
				want64[i] = float64(w)
			}
			probs := softmax64(want64)
			for id, w := range tc.want {
				if got[int32(id)] != w {
					t.Errorf("id %d: logit %v, want %v", id, got[int32(id)], w)
				}
			}
			for _, c := range res.Candidates {
				if d := math.Abs(float64(c.Prob) - probs[c.ID]); d > 1e-6 {
					t.Errorf("id %d: Prob %v, want %v (penalised softmax)", c.ID, c.Prob, probs[c.ID])
				}
			}
		})
	}
}

func TestPenaltiesChangeGreedyChoice(t *testing.T) {
	p := with(func(p *Params) { p.Temperature = 0; p.RepeatPenalty = 1.5 })
	logits := []float32{1, 2.5, 2}
	if tok := New(p).Sample(logits, []int32{1}).Token; tok != 2 {
		t.Fatalf("token %d, want 2 (2.5/1.5 < 2)", tok)
	}
}
