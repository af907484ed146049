package arch

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Route follows each gating rule: which experts, in which order, with
// which weights, against the rule computed in float64 by hand.
func TestRoute(t *testing.T) {
	cases := []struct {
		name    string
		g       Gating
		logits  []float32
		k       int
		wantSel []int32
	}{
		{"softmax-norm picks the largest", GatingSoftmaxTopKNorm, []float32{0.1, 2, -1, 1.5, 0.3}, 2, []int32{1, 3}},
		{"softmax-norm k=1 weighs 1", GatingSoftmaxTopKNorm, []float32{-3, -2, -1}, 1, []int32{2}},
		{"ties go to the lower id", GatingSoftmaxTopKNorm, []float32{1, 5, 5, 0}, 2, []int32{1, 2}},
		{"top-k softmax on raw logits", GatingTopKSoftmax, []float32{4, -2, 7, 3.5, 0}, 3, []int32{2, 0, 3}},
		{"all experts", GatingTopKSoftmax, []float32{1, 2}, 2, []int32{1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logits := slices.Clone(c.logits)
			sel, wts := make([]int32, c.k), make([]float32, c.k)
			c.g.Route(logits, make([]int32, len(logits)), sel, wts)
			if !slices.Equal(sel, c.wantSel) {
				t.Fatalf("experts %v, want %v", sel, c.wantSel)
			}
			// softmax-norm: p_i / Σ_chosen p_j = e^{l_i} / Σ_chosen e^{l_j},
			// which is also what top-k softmax computes.
			var sum float64
			for _, id := range sel {
				sum += math.Exp(float64(c.logits[id]))
			}
			var total float64
			for j, id := range sel {
				want := math.Exp(float64(c.logits[id])) / sum
				if math.Abs(float64(wts[j])-want) > 1e-6 {
					t.Errorf("weight of expert %d = %v, want %v", id, wts[j], want)
				}
				total += float64(wts[j])
			}
			if math.Abs(total-1) > 1e-6 {
				t.Errorf("weights sum to %v", total)
			}
		})
	}
}

// Route's selection picks what a stable sort by falling logit would put
// first (ggml_argsort_top_k's order), over random logits with many ties.
func TestRouteMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(64)
		k := 1 + r.IntN(n)
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(r.IntN(9)) / 4 // few values, many ties
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(logits[b], logits[a]) })
		sel, wts := make([]int32, k), make([]float32, k)
		GatingTopKSoftmax.Route(slices.Clone(logits), make([]int32, n), sel, wts)
		if !slices.Equal(sel, want[:k]) {
			t.Fatalf("logits %v, k=%d: experts %v, want %v", logits, k, sel, want[:k])
		}
	}
}
