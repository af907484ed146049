package conversation

import (
	"reflect"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// TestStepSpecRoundTrip: a speculative reply keeps each token's draft
// fate (on the step, which every reply keeps), the draft and its
// distribution (in the detail), through StepInfo, a fork's prefix and
// compaction; the running totals are the engine's and not kept.
func TestStepSpecRoundTrip(t *testing.T) {
	dc := []sample.Candidate{{ID: 5, Prob: 0.7}, {ID: 6, Prob: 0.2}}
	marks := []*engine.SpecMark{
		nil,
		{Source: "draft", Fate: engine.FateAccepted, Draft: 5, DraftCandidates: dc, Totals: engine.SpecStats{Rounds: 1}},
		{Source: "draft", Fate: engine.FateCorrected, Draft: 6, DraftCandidates: dc[1:]},
		{Source: "draft", Fate: engine.FateBonus},
		nil,
	}
	r := &Turn{Role: "assistant"}
	for i, m := range marks {
		r.AppendToken(engine.TokenInfo{ID: int32(5 + i), Piece: "x", Index: i, Spec: m,
			Candidates: []sample.Candidate{{ID: int32(5 + i), Prob: 1}}})
	}
	check := func(what string, r *Turn, n int) {
		t.Helper()
		for k := range n {
			want := marks[k]
			if want != nil {
				w := *want
				w.Totals = engine.SpecStats{}
				want = &w
			}
			if r.Steps[k].Spec() != fate(marks[k]) {
				t.Errorf("%s step %d: fate %q", what, k, r.Steps[k].Spec())
			}
			got := mustStepInfo(t, r, k).Spec
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s step %d: %+v, want %+v", what, k, got, want)
			}
		}
	}
	check("live", r, len(marks))
	for _, k := range []int{1, 2, 3, 5} {
		p, ok := r.Prefix(k)
		if !ok {
			t.Fatal("no prefix")
		}
		check("prefix", &p, k)
	}
	r.compact()
	check("compacted", r, len(marks))
}

func fate(m *engine.SpecMark) engine.SpecFate {
	if m == nil {
		return ""
	}
	return m.Fate
}
