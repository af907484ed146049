package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"vkchat/runtime/sample"
)

// tokenEvents returns the token events of evs and the prefill event.
func tokenEvents(evs []Event) ([]TokenInfo, *PrefillInfo) {
	var toks []TokenInfo
	var pre *PrefillInfo
	for _, e := range evs {
		switch e.Kind {
		case EventToken:
			toks = append(toks, *e.Token)
		case EventPrefill:
			pre = e.Prefill
		}
	}
	return toks, pre
}

// TestForkContinuesLikeFreshGeneration forks a greedy reply at a step with
// its second candidate. The fork must rewind, not re-prefill (one token
// recomputed), see exactly the logits the original step saw, and continue
// exactly as a fresh session given the same prompt, prefix and forced token.
func TestForkContinuesLikeFreshGeneration(t *testing.T) {
	for _, name := range testBackends(t) {
		t.Run(name, func(t *testing.T) { testForkContinues(t, name) })
	}
}

// forkFreshTol bounds how far the fork's logits may be from a fresh
// session's, which reads the prefix as one batch where the fork computed it
// a token at a time. Both backends agree exactly (measured 0 on the
// reference backend and on lavapipe); a device whose batched kernels round
// differently from its decode kernels would show here.
var forkFreshTol = map[string]float64{"cpu": 0, "vulkan": 0}

func testForkContinues(t *testing.T, backendName string) {
	ctx := context.Background()
	s := loadSession(t, "stories260K.gguf", backendName)
	s.SetParams(greedy())
	msgs := userMsg("Once upon a time")
	evs, err := collect(t, s, ctx, Request{Messages: msgs, MaxTokens: 24})
	if err != nil {
		t.Fatal(err)
	}
	orig, pre := tokenEvents(evs)
	promptLen := pre.Tokens + pre.Reused
	const k = 6
	alt := orig[k].Candidates[1].ID
	prefix := make([]int32, k)
	for i := range prefix {
		prefix[i] = orig[i].ID
	}
	fork := Request{Messages: msgs, MaxTokens: k + 15, Fork: &ForkPoint{Prefix: prefix, Token: alt}}

	evs, err = collect(t, s, ctx, fork)
	if err != nil {
		t.Fatal(err)
	}
	forked, fpre := tokenEvents(evs)
	if fpre.Tokens != 1 || fpre.Reused != promptLen+k-1 {
		t.Errorf("fork prefill computed %d tokens reusing %d, want 1 reusing %d (a rewind, not a re-prefill)",
			fpre.Tokens, fpre.Reused, promptLen+k-1)
	}
	if len(forked) != 15 {
		t.Fatalf("fork produced %d tokens, want 15 (the forced one and 14 more)", len(forked))
	}
	first := forked[0]
	if first.Funnel[5].Stage != sample.StageForced {
		t.Errorf("the forced step's funnel ends in %v, want forced", first.Funnel[5].Stage)
	}
	if !first.Forced || first.ID != alt || first.Index != k {
		t.Fatalf("first fork token: forced %v id %d index %d, want forced %d at %d", first.Forced, first.ID, first.Index, alt, k)
	}
	// The forced step recomputes the same token at the same position as
	// the original step did, one token at a time: the same logits, exactly.
	for i, c := range first.Candidates {
		o := orig[k].Candidates[i]
		if c.ID != o.ID || c.Logit != o.Logit {
			t.Fatalf("forced step candidate %d: %d/%v, original step had %d/%v", i, c.ID, c.Logit, o.ID, o.Logit)
		}
	}
	if want := float64(orig[k].Candidates[1].Logit) - orig[k].LogZ; first.LogProb != want {
		t.Errorf("forced token logprob %v, want the original step's %v", first.LogProb, want)
	}

	fresh := loadSession(t, "stories260K.gguf", backendName)
	fresh.SetParams(greedy())
	evs, err = collect(t, fresh, ctx, fork)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tokenEvents(evs)
	if len(want) != len(forked) {
		t.Fatalf("fresh generation gave %d tokens, fork %d", len(want), len(forked))
	}
	worst := 0.0
	for i := range want {
		if want[i].ID != forked[i].ID {
			t.Fatalf("token %d: fork %d, fresh %d", i, forked[i].ID, want[i].ID)
		}
		for j, c := range want[i].Candidates {
			d := math.Abs(float64(c.Logit - forked[i].Candidates[j].Logit))
			worst = max(worst, d)
			if c.ID != forked[i].Candidates[j].ID {
				t.Fatalf("step %d candidate %d: fork %d, fresh %d", i, j, forked[i].Candidates[j].ID, c.ID)
			}
		}
	}
	t.Logf("%s: largest |logit| difference between the fork and a fresh session: %g", backendName, worst)
	if worst > forkFreshTol[backendName] {
		t.Errorf("fork and fresh logits differ by up to %g, bound %g", worst, forkFreshTol[backendName])
	}
}

// TestPrefillProgress: a prompt longer than one chunk reports progress per
// chunk, in order, before the prefill event.
func TestPrefillProgress(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.SetParams(greedy())
	prompt := strings.Repeat("Once upon a time there was a girl. ", 12)
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg(prompt), MaxTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	var progress []PrefillProgress
	var pre *PrefillInfo
	for _, e := range evs {
		switch e.Kind {
		case EventPrefillProgress:
			if pre != nil {
				t.Fatalf("progress after the prefill event")
			}
			progress = append(progress, *e.Progress)
		case EventPrefill:
			pre = e.Prefill
		}
	}
	if pre == nil || pre.Tokens <= prefillChunk {
		t.Fatalf("prompt of %v tokens is not longer than a chunk (%d)", pre, prefillChunk)
	}
	wantN := (pre.Tokens - 1) / prefillChunk
	if len(progress) != wantN {
		t.Fatalf("%d progress events for %d tokens, want %d", len(progress), pre.Tokens, wantN)
	}
	for i, p := range progress {
		if p.Done != (i+1)*prefillChunk || p.Total != pre.Tokens {
			t.Errorf("progress %d: %d/%d, want %d/%d", i, p.Done, p.Total, (i+1)*prefillChunk, pre.Tokens)
		}
	}
}

func TestPrefillETA(t *testing.T) {
	cases := []struct {
		p    PrefillProgress
		want float64 // seconds
	}{
		{PrefillProgress{Done: 0, Total: 100, Elapsed: 1e9}, 0},
		{PrefillProgress{Done: 25, Total: 100, Elapsed: 1e9}, 3},
		{PrefillProgress{Done: 100, Total: 100, Elapsed: 1e9}, 0},
	}
	for _, tc := range cases {
		if got := tc.p.ETA().Seconds(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%+v: ETA %v s, want %v", tc.p, got, tc.want)
		}
	}
}
