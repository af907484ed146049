package sample

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRankingMatchesFullSort compares every prefix the chain can ask for,
// in the order it asks, against a full sort with the same tie rule.
func TestRankingMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 200 {
		v := 1 + r.IntN(3000)
		logits := make([]float32, v)
		for i := range logits {
			// Few distinct values force many ties.
			logits[i] = float32(r.IntN(1 + trial%50))
		}
		want := make([]int32, v)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int {
			switch {
			case logits[a] > logits[b]:
				return -1
			case logits[a] < logits[b]:
				return 1
			}
			return 0
		})
		var rk ranking
		rk.reset(logits)
		for _, n := range []int{1 + r.IntN(40), 1 + r.IntN(300), r.IntN(v + 5), v} {
			got := rk.top(n)
			if wantN := min(n, v); !slices.Equal(got, want[:wantN]) {
				t.Fatalf("trial %d: top(%d) of %d wrong:\n got %v\nwant %v", trial, n, v, got[:min(10, len(got))], want[:min(10, wantN)])
			}
		}
	}
}

func TestRankingSortedInputs(t *testing.T) {
	// Ascending and descending inputs are the classic quickselect worst
	// cases; the depth limit must keep them correct.
	for _, asc := range []bool{true, false} {
		logits := make([]float32, 20000)
		for i := range logits {
			logits[i] = float32(i)
			if !asc {
				logits[i] = -float32(i)
			}
		}
		var rk ranking
		rk.reset(logits)
		got := rk.top(5000)
		for i, id := range got {
			want := int32(i)
			if asc {
				want = int32(len(logits) - 1 - i)
			}
			if id != want {
				t.Fatalf("asc=%v: position %d has %d, want %d", asc, i, id, want)
			}
		}
	}
}
