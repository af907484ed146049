package conversation

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// mustStepInfo is step k of t as the engine reported it; the test fails
// when the turn no longer keeps its detail.
func mustStepInfo(t *testing.T, tr *Turn, k int) engine.TokenInfo {
	t.Helper()
	info, ok := tr.StepInfo(k)
	if !ok {
		t.Fatalf("step %d: details not kept", k)
	}
	return info
}

func detailTokens3() []engine.TokenInfo {
	p := sample.Defaults()
	hot := p
	hot.Temperature = 1.3
	funnel := sample.Funnel{
		{Stage: sample.StagePenalties, Left: 151_936, Exact: true, Mass: 1, Active: true, Penalized: 7},
		{Stage: sample.StageTopK, Left: 40, Exact: true, Mass: 0.987654321, Active: true},
		{Stage: sample.StageTopP, Left: 12, Mass: 0.95123, Active: true},
		{Stage: sample.StageMinP, Left: 3, Exact: true, Mass: 0.9},
		{Stage: sample.StageTemperature, Left: 3, Exact: true, Mass: 0.9, Active: true},
		{Stage: sample.StageForced, Left: 1, Exact: true, Mass: 0.25, Active: true},
	}
	cands := func(ids ...int32) []sample.Candidate {
		out := make([]sample.Candidate, len(ids))
		for i, id := range ids {
			out[i] = sample.Candidate{ID: id, Logit: float32(10 - i), Prob: 0.5 / float32(i+1), Final: 0.6 / float32(i+1), Cut: i > 1, CutBy: sample.StageMinP}
		}
		return out
	}
	return []engine.TokenInfo{
		{ID: 5, Piece: "Hello", Candidates: cands(5, 6, 7), Entropy: 1.25, Params: p, Index: 0, Duration: 3 * time.Millisecond,
			LogProb: -0.7, LogZ: 10.7},
		{ID: 9, Piece: ",", Candidates: cands(8, 9), Entropy: 0.5, Params: hot, Index: 1, Duration: 2 * time.Millisecond,
			Funnel: funnel, LogProb: -1.9, LogZ: 11.1, Top: []engine.TokenLogprob{{ID: 8, Logprob: -0.2}, {ID: 9, Logprob: -1.9}}, Forced: true,
			Experts: []engine.Routing{{Experts: []int32{3, 1}, Weights: []float32{0.7, 0.3}}, {Experts: []int32{0, 7}, Weights: []float32{0.55, 0.45}}}},
		{ID: 7, Piece: " world", Candidates: cands(7), Entropy: 0.1, Params: hot, Index: 2, Duration: time.Millisecond, LogProb: -0.01, LogZ: 3,
			Experts: []engine.Routing{{Experts: []int32{5, 2}, Weights: []float32{0.9, 0.1}}, {Experts: []int32{6}, Weights: []float32{1}}}},
	}
}

// TestStepDetailRoundTrip: what a reply keeps per token rebuilds the
// engine's TokenInfo field for field (the inspector, fork and /export read
// it back), the chosen token's probability and log-probability are kept in
// the step itself, and the step stays small.
func TestStepDetailRoundTrip(t *testing.T) {
	r := &Turn{Role: "assistant"}
	in := detailTokens3()
	for _, info := range in {
		r.AppendToken(info)
	}
	if r.Content != "Hello, world" || len(r.Steps) != 3 || len(r.detail.params) != 2 {
		t.Fatalf("content %q, %d steps, %d distinct settings", r.Content, len(r.Steps), len(r.detail.params))
	}
	for k, want := range in {
		got := mustStepInfo(t, r, k)
		want.Answer = want.Piece
		if !reflect.DeepEqual(got, want) {
			t.Errorf("step %d:\n got %+v\nwant %+v", k, got, want)
		}
	}
	if p := r.ChosenProb(1); p != in[1].Candidates[1].Prob {
		t.Errorf("chosen probability %v, want %v", p, in[1].Candidates[1].Prob)
	}
	// The routing survives a fork's prefix and a finished reply's compaction.
	for _, k := range []int{1, 2, 3} {
		p, ok := r.Prefix(k)
		if !ok {
			t.Fatalf("prefix %d: no detail", k)
		}
		for j := range k {
			if got := p.Routing(j); !reflect.DeepEqual(got, in[j].Experts) {
				t.Errorf("prefix %d, step %d: routing %+v, want %+v", k, j, got, in[j].Experts)
			}
		}
	}
	r.compact()
	if got := r.Routing(2); !reflect.DeepEqual(got, in[2].Experts) {
		t.Errorf("compacted: routing %+v, want %+v", got, in[2].Experts)
	}
	if b := r.Surprisal(2); b != 0.01/0.6931471805599453 {
		t.Errorf("surprisal %v bits", b)
	}
	if s, d := unsafe.Sizeof(Step{}), unsafe.Sizeof(stepDetail{}); s > 32 || d > 160 {
		t.Errorf("step is %d bytes (want ≤ 32), its detail %d (want ≤ 160)", s, d)
	}

	// Dropped detail: the step still has its token and figures, not its
	// alternatives.
	r.detail = nil
	info, ok := r.StepInfo(1)
	if ok || info.ID != 9 || info.Piece != "," || info.LogProb != -1.9 || !info.Forced || info.Candidates != nil || info.Experts != nil || r.Routing(1) != nil {
		t.Errorf("without detail: ok %v, %+v", ok, info)
	}
	if _, ok := r.Prefix(1); ok {
		t.Error("a reply without detail gave a fork prefix")
	}
	if p := r.ChosenProb(1); p != in[1].Candidates[1].Prob {
		t.Errorf("heatmap probability lost with the detail: %v", p)
	}
}

// TestStepDetailCandidatesCapped: a longer candidate list than the panel
// reaches is cut at KeptCandidates.
func TestStepDetailCandidatesCapped(t *testing.T) {
	r := &Turn{Role: "assistant"}
	cands := make([]sample.Candidate, 300)
	for i := range cands {
		cands[i] = sample.Candidate{ID: int32(i)}
	}
	r.AppendToken(engine.TokenInfo{ID: 0, Piece: "x", Candidates: cands, Top: make([]engine.TokenLogprob, 300)})
	info := mustStepInfo(t, r, 0)
	if len(info.Candidates) != KeptCandidates || len(info.Top) != KeptCandidates || info.Candidates[KeptCandidates-1].ID != KeptCandidates-1 {
		t.Errorf("kept %d candidates and %d top tokens, want %d each", len(info.Candidates), len(info.Top), KeptCandidates)
	}
}

// TestDetailHistoryBounds: when a reply starts, the replies before it keep
// their detail only within DetailReplies (itself counted) and DetailTokens;
// the reply being written keeps its own whatever its length.
func TestDetailHistoryBounds(t *testing.T) {
	tests := []struct {
		name   string
		tokens []int // each earlier reply's length, oldest first
		kept   int   // how many of the newest of them keep detail
	}{
		{"few", []int{10, 10}, 2},
		{"by count", []int{10, 10, 10, 10, 10, 10, 10}, DetailReplies - 1},
		{"by tokens", []int{100, DetailTokens - 150, 100, 100}, 2},
		{"within both", []int{100, DetailTokens - 250, 100}, 3},
		{"longer than the budget", []int{10, 10, DetailTokens + 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h detailHistory
			var rs []*Turn
			for _, n := range tc.tokens {
				r := &Turn{Role: "assistant", Streaming: true}
				h.add(r)
				for i := range n {
					r.AppendToken(engine.TokenInfo{ID: int32(i), Piece: "a", Candidates: make([]sample.Candidate, 2)})
				}
				if !r.HasDetail() {
					t.Fatalf("reply of %d tokens lost its detail while written", n)
				}
				r.Streaming = false
				rs = append(rs, r)
			}
			h.add(&Turn{Role: "assistant", Streaming: true})
			for i, r := range rs {
				if want := i >= len(rs)-tc.kept; r.HasDetail() != want {
					t.Errorf("reply %d of %d (%d tokens): detail kept %v, want %v", i+1, len(rs), len(r.Steps), r.HasDetail(), want)
				}
				if len(r.Steps) != tc.tokens[i] {
					t.Errorf("reply %d: %d steps left, want all %d", i+1, len(r.Steps), tc.tokens[i])
				}
			}
			if len(h.turns) != tc.kept+1 {
				t.Errorf("history holds %d replies, want %d", len(h.turns), tc.kept+1)
			}
		})
	}
}
