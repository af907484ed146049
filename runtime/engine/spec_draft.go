package engine

import (
	"context"
	"fmt"
	"math"

	"vkchat/runtime/sample"
)

// modelDrafter drafts with a second, smaller model of the same
// vocabulary: greedy decoding on a session of its own, which reuses its
// cached prefix from one round to the next as a prefill does (a hybrid
// draft model's state rewound to its checkpoint and read again), so it
// stays in step with the target without hooks of its own.
type modelDrafter struct {
	s *Session
}

// draftCandidates is how many of the draft model's likeliest tokens a
// draft carries for the inspector.
const draftCandidates = 10

func newModelDrafter(target *Session, o SpecOptions) (Drafter, error) {
	if o.Draft == "" {
		return nil, fmt.Errorf("no draft model: give one with --draft FILE")
	}
	target.mu.Lock()
	be := target.info.Backend
	target.mu.Unlock()
	d, err := Load(context.Background(), o.Draft, Options{Backend: be, ContextSize: target.ctxSize,
		Threads: target.beOpts.Threads, Device: target.beOpts.Device, Template: "none"})
	if err != nil {
		return nil, fmt.Errorf("load the draft model: %w", err)
	}
	if err := sameVocab(target, d); err != nil {
		d.Close()
		return nil, err
	}
	return &modelDrafter{s: d}, nil
}

// sameVocab refuses a draft model whose tokens are not the target's, id
// for id: its drafts would be other tokens than the target verifies.
func sameVocab(target, draft *Session) error {
	tt, dt := target.tok, draft.tok
	if tt.VocabSize() != dt.VocabSize() {
		return fmt.Errorf("the draft model %s has %d tokens, the target %s has %d: a draft model needs the target's vocabulary",
			draft.file.Path, dt.VocabSize(), target.file.Path, tt.VocabSize())
	}
	for id := range tt.VocabSize() {
		if a, b := tt.Piece(int32(id)), dt.Piece(int32(id)); string(a) != string(b) {
			return fmt.Errorf("token %d is %q in the draft model %s but %q in the target %s: a draft model needs the target's vocabulary",
				id, b, draft.file.Path, a, target.file.Path)
		}
	}
	return nil
}

func (*modelDrafter) Name() string { return string(SpecDraft) }

// Propose implements Drafter: the draft model reads history (what it has
// not cached of it) and decodes n tokens greedily.
func (m *modelDrafter) Propose(ctx context.Context, history []int32, n int) ([]Draft, error) {
	d := m.s
	d.genMu.Lock()
	defer d.genMu.Unlock()
	if len(history)+n > d.ctxSize {
		n = d.ctxSize - len(history)
	}
	if n <= 0 {
		return nil, nil
	}
	pf, err := d.prefill(ctx, history, nil)
	if err != nil {
		return nil, fmt.Errorf("draft model: %w", err)
	}
	logits := pf.logits
	out := make([]Draft, 0, n)
	for i := 0; i < n; i++ {
		tok, cands := draftArgmax(logits)
		out = append(out, Draft{Token: tok, Candidates: cands})
		if i == n-1 {
			break
		}
		pos := len(history) + i
		if logits, err = d.forward(ctx, []int32{tok}, pos, false); err != nil {
			return nil, fmt.Errorf("draft model: %w", err)
		}
		d.mu.Lock()
		d.cached = append(d.cached, tok)
		d.mu.Unlock()
	}
	return out, nil
}

// draftArgmax is the draft model's greedy token and its likeliest tokens
// with their probabilities.
func draftArgmax(logits []float32) (int32, []sample.Candidate) {
	logZ := logSumExp(logits)
	top := topLogprobs(logits, logZ, draftCandidates)
	cands := make([]sample.Candidate, len(top))
	for i, t := range top {
		p := float32(math.Exp(t.Logprob))
		cands[i] = sample.Candidate{ID: t.ID, Logit: logits[t.ID], Prob: p, Final: p}
	}
	if len(top) == 0 {
		return 0, nil
	}
	return top[0].ID, cands
}

func (*modelDrafter) Observe([]int32, int, Hidden) {}
func (*modelDrafter) Settle(int)                   {}
func (m *modelDrafter) Close() error               { return m.s.Close() }
