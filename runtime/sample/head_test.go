package sample

import (
	"cmp"
	"math"
	"slices"
	"testing"
)

// headOf reduces logits the way a backend would: the best n, ties by id,
// with the whole vocabulary's statistics.
func headOf(logits []float32, n int) Head {
	ids := make([]int32, len(logits))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := cmp.Compare(logits[b], logits[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	ids = ids[:min(n, len(ids))]
	h := Head{IDs: ids, Max: logits[ids[0]]}
	for _, id := range ids {
		h.Logits = append(h.Logits, logits[id])
	}
	h.Z, h.Entropy = softmaxStats(logits, h.Max)
	return h
}

// TestSampleHeadMatchesSample: on a head of HeadSize candidates the chain
// draws the same tokens and reports the same candidates as on the whole
// vocabulary, for every setting that allows a head.
func TestSampleHeadMatchesSample(t *testing.T) {
	logits := flatLogits(3000, 9)
	logits[17] = logits[slices.Index(logits, slices.Max(logits))] // a tie at the top
	for _, tc := range []struct {
		name string
		p    Params
	}{
		{"defaults", Defaults()},
		{"greedy", with(func(p *Params) { p.Temperature = 0; p.TopK = 40 })},
		{"top-k 5", with(func(p *Params) { p.TopK = 5; p.TopP = 1; p.MinP = 0 })},
		{"top-p tight", with(func(p *Params) { p.TopK = 40; p.TopP = 0.3 })},
		{"min-p", with(func(p *Params) { p.TopK = 40; p.MinP = 0.5 })},
		{"hot", with(func(p *Params) { p.Temperature = 2.5; p.TopK = 60 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := HeadSize(tc.p, nil)
			if n == 0 {
				t.Fatalf("HeadSize %+v = 0", tc.p)
			}
			h := headOf(logits, n)
			full, head := New(tc.p), New(tc.p)
			for i := 0; i < 200; i++ {
				a, b := full.Sample(logits, nil), head.SampleHead(h)
				if a.Token != b.Token {
					t.Fatalf("draw %d: token %d on the head, %d on the vocabulary", i, b.Token, a.Token)
				}
				if len(a.Candidates) != len(b.Candidates) || math.Abs(float64(a.Entropy-b.Entropy)) > 1e-6 {
					t.Fatalf("draw %d: %d candidates (H %.6f) on the head, %d (H %.6f) on the vocabulary", i, len(b.Candidates), b.Entropy, len(a.Candidates), a.Entropy)
				}
				for j := range a.Candidates {
					ca, cb := a.Candidates[j], b.Candidates[j]
					if ca.ID != cb.ID || ca.Cut != cb.Cut || math.Abs(float64(ca.Prob-cb.Prob)) > 1e-6 || math.Abs(float64(ca.Final-cb.Final)) > 1e-6 {
						t.Fatalf("draw %d candidate %d: head %+v, vocabulary %+v", i, j, cb, ca)
					}
				}
			}
		})
	}
}

func TestHeadSizeNeedsVocabulary(t *testing.T) {
	hist := []int32{1, 2, 3}
	for _, tc := range []struct {
		name string
		p    Params
		hist []int32
		want int
	}{
		{"defaults", Defaults(), hist, 40},
		{"top-k below the panel", with(func(p *Params) { p.TopK = 3 }), hist, 10},
		{"top-k off", with(func(p *Params) { p.TopK = 0 }), hist, 0},
		{"repeat penalty", with(func(p *Params) { p.TopK = 40; p.RepeatPenalty = 1.1; p.RepeatLastN = 64 }), hist, 0},
		{"repeat penalty, no history yet", with(func(p *Params) { p.TopK = 40; p.RepeatPenalty = 1.1; p.RepeatLastN = 64 }), nil, 40},
		{"presence penalty", with(func(p *Params) { p.TopK = 40; p.PresencePenalty = 0.5; p.RepeatLastN = -1 }), hist, 0},
	} {
		if got := HeadSize(tc.p, tc.hist); got != tc.want {
			t.Errorf("%s: HeadSize = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestPreviewHeadMatchesPreview(t *testing.T) {
	logits := flatLogits(2000, 4)
	p := with(func(p *Params) { p.TopK = 20; p.TopP = 0.7; p.Temperature = 0.6 })
	a, b := Preview(p, logits, nil), PreviewHead(p, headOf(logits, HeadSize(p, nil)))
	if a.Token != b.Token || len(a.Candidates) != len(b.Candidates) {
		t.Fatalf("head preview %d with %d candidates, vocabulary %d with %d", b.Token, len(b.Candidates), a.Token, len(a.Candidates))
	}
	for i := range a.Candidates {
		if a.Candidates[i].ID != b.Candidates[i].ID || a.Candidates[i].Cut != b.Candidates[i].Cut {
			t.Fatalf("candidate %d: head %+v, vocabulary %+v", i, b.Candidates[i], a.Candidates[i])
		}
	}
}
