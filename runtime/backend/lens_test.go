package backend

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestLensTopMatchesSort: the heap selection of a layer's top k gives the
// ids, logits and softmax terms a full sort of the vocabulary gives (ties
// broken by the lower id), for k from 1 to the whole vocabulary, on
// logits with many ties and on distinct ones.
func TestLensTopMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, vocab := range []int{1, 2, 17, 512, 5000} {
		for _, levels := range []int{3, 0} {
			logits := make([]float32, vocab)
			for i := range logits {
				if levels > 0 {
					logits[i] = float32(r.IntN(levels)) - 1 // many ties
				} else {
					logits[i] = float32(r.NormFloat64() * 4)
				}
			}
			want := make([]int32, vocab)
			for i := range want {
				want[i] = int32(i)
			}
			sort.SliceStable(want, func(a, b int) bool { return logits[want[a]] > logits[want[b]] })
			for _, k := range []int{1, 2, 10, vocab / 2, vocab} {
				if k < 1 || k > vocab {
					continue
				}
				got := LensTopOf(logits, k, make([]int32, vocab))
				if !slices.Equal(got.IDs, want[:k]) {
					t.Fatalf("vocab %d levels %d k %d: ids %v, the sort's %v", vocab, levels, k, got.IDs, want[:k])
				}
				for j, id := range got.IDs {
					if got.Logits[j] != logits[id] {
						t.Fatalf("vocab %d k %d: logit %d is %g, id %d has %g", vocab, k, j, got.Logits[j], id, logits[id])
					}
				}
				if got.Max != float64(logits[want[0]]) {
					t.Fatalf("vocab %d k %d: max %g, want %g", vocab, k, got.Max, logits[want[0]])
				}
			}
		}
	}
}
