package engine

import (
	"context"
	"encoding/hex"
	"fmt"

	"vkchat/runtime/backend"
	"vkchat/runtime/sample"
)

// ErrNoMTP is returned where the model has no MTP head, or the backend
// cannot run it.
var ErrNoMTP = backend.ErrNoMTP

// mtpBackend is the session's backend as an MTP runner, or an error that
// says why there is none.
func (s *Session) mtpBackend() (backend.MTPBackend, error) {
	mb, ok := s.be.(backend.MTPBackend)
	if !ok {
		return nil, fmt.Errorf("%w on the %s backend: it does not run one yet (--backend cpu does)", ErrNoMTP, s.be.Name())
	}
	if !mb.HasMTP() {
		return nil, fmt.Errorf("%s: %w: the model has none (a Qwen3.5/3.6 file with nextn_predict_layers carries one)", s.file.Path, ErrNoMTP)
	}
	return mb, nil
}

// forwardHidden is mb.ForwardHidden, guarded by mapped as forward is.
func (s *Session) forwardHidden(ctx context.Context, mb backend.MTPBackend, tokens []int32, pos int) (logits, hidden []float32, err error) {
	err = s.mapped(func() error {
		logits, hidden, err = mb.ForwardHidden(ctx, tokens, pos)
		return err
	})
	s.trackState(pos+len(tokens), err)
	return logits, hidden, err
}

// mtpRows is mb.MTP, guarded by mapped; the head keeps no recurrent
// state, so the trunk's is not touched.
func (s *Session) mtpRows(ctx context.Context, mb backend.MTPBackend, tokens []int32, hidden []float32, pos int) (logits, y []float32, err error) {
	err = s.mapped(func() error {
		logits, y, err = mb.MTP(ctx, tokens, hidden, pos)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("MTP head at positions %d..%d: %w", pos, pos+len(tokens)-1, err)
	}
	return logits, y, nil
}

// EvaluateMTP is Evaluate with the model's MTP head beside it, in the
// layout of shared/reference/2026b/synth-qwen35mtp-*.json: every step t
// also carries its token, the next one and the head's top k at MTP row
// t+1 (token x_{t+1}, the trunk's hidden state at t), which drafts
// x_{t+2}; MTPPos0Top is row 0 (x_0 with a zero state). The head's rows
// run as a speculative loop mirrors them: the prompt's at once after the
// prefill, then one per decoded token, over its own cache.
func (s *Session) EvaluateMTP(ctx context.Context, prompt string, n, topK int) (*EvalResult, error) {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	mb, err := s.mtpBackend()
	if err != nil {
		return nil, err
	}
	ids, err := s.evalPrompt(prompt, n)
	if err != nil {
		return nil, err
	}
	res := &EvalResult{Prompt: prompt, PromptTokens: ids, Greedy: []int32{}, PiecesHex: []string{}}
	all, hidden, err := s.forwardHidden(ctx, mb, ids, 0)
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	vocab, embd := s.model.Vocab, s.model.Embd
	if err := checkFinite(nextDist{logits: all}, 0, s.file.Path); err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	for i := range ids {
		res.Steps = append(res.Steps, EvalStep{Pos: i, Top: topLogits(all[i*vocab:(i+1)*vocab], topK)})
	}
	lastTop := func() int32 { return int32(res.Steps[len(res.Steps)-1].Top[0][0]) }
	// rows 0..len(ids): x_p with h_{p-1}, the last pairing the first
	// greedy token with the prompt's last state
	rows := append(append([]int32{}, ids...), lastTop())
	h := make([]float32, len(rows)*embd)
	copy(h[embd:], hidden)
	logits, _, err := s.mtpRows(ctx, mb, rows, h, 0)
	if err != nil {
		return nil, err
	}
	res.MTPPos0Top = topLogits(logits[:vocab], topK)
	for p := 1; p < len(rows); p++ {
		res.setMTP(p-1, rows[p], topLogits(logits[p*vocab:(p+1)*vocab], topK))
	}
	pos := len(ids)
	var text []byte
	for g := 0; g < n; g++ {
		next := lastTop()
		if s.tok.IsEOG(next) {
			break
		}
		res.Greedy = append(res.Greedy, next)
		piece := s.tok.Piece(next)
		res.PiecesHex = append(res.PiecesHex, hex.EncodeToString(piece))
		text = append(text, piece...)
		lg, hd, err := s.forwardHidden(ctx, mb, []int32{next}, pos)
		if err != nil {
			return nil, fmt.Errorf("decode step %d: %w", g, err)
		}
		if err := checkFinite(nextDist{logits: lg}, g+1, s.file.Path); err != nil {
			return nil, fmt.Errorf("decode step %d: %w", g, err)
		}
		res.Steps = append(res.Steps, EvalStep{Pos: pos, Top: topLogits(lg, topK)})
		after := lastTop()
		ml, _, err := s.mtpRows(ctx, mb, []int32{after}, hd, pos+1)
		if err != nil {
			return nil, err
		}
		res.setMTP(pos, after, topLogits(ml, topK))
		pos++
	}
	seq := append(append([]int32{}, ids...), res.Greedy...)
	for i := range res.Steps {
		res.Steps[i].Token = &seq[i]
	}
	res.Text = string(text)
	s.mu.Lock()
	s.cached = append(s.cached[:0], ids...)
	s.cached = append(s.cached, res.Greedy...)
	s.mu.Unlock()
	return res, nil
}

// setMTP records step t's next token and the MTP head's top after it.
func (r *EvalResult) setMTP(t int, next int32, top [][3]float64) {
	r.Steps[t].NextToken = &next
	r.Steps[t].MTPTop = top
}

func init() { registerDrafter(SpecMTP, newMTPDrafter) }

// mtpDrafter drafts with a model's MTP head as llama.cpp's draft-mtp does
// (common/speculative.cpp:380-651; ../shared/docs/architectures-2026b.md,
// "Speculative loop"): the head's cache mirrors what the target read, row
// p pairing x_p with the target's hidden state at p-1 (Observe); a draft
// is the head's argmax, and each further draft feeds the previous draft
// with the head's own output at the next position (Propose). The drafts'
// rows are overwritten by the next Observe at their positions, so the
// head needs no rollback of its own.
type mtpDrafter struct {
	s    *Session
	mb   backend.MTPBackend
	embd int
	// known holds the target's hidden states of positions from..: the
	// latest Observe's rows and the one before them, as far as they are
	// still the target's (Settle cuts them back). The hidden state of an
	// earlier position is not kept (a long context's would cost a
	// context of embd-wide rows).
	from  int
	known []float32
}

func newMTPDrafter(s *Session, _ SpecOptions) (Drafter, error) {
	mb, err := s.mtpBackend()
	if err != nil {
		return nil, err
	}
	mb.KeepHidden(true)
	return &mtpDrafter{s: s, mb: mb, embd: s.model.Embd}, nil
}

func (*mtpDrafter) Name() string { return string(SpecMTP) }

// Close implements Drafter: the backend stops keeping hidden states.
func (d *mtpDrafter) Close() error {
	d.mb.KeepHidden(false)
	return nil
}

// hiddenAt is the target's hidden state at position p, nil when not kept
// (and a zero row for p = -1, before the first token, as llama.cpp's
// first MTP row has).
func (d *mtpDrafter) hiddenAt(p int) []float32 {
	e := d.embd
	if p == -1 {
		return make([]float32, e)
	}
	if p < d.from || (p-d.from+1)*e > len(d.known) {
		return nil
	}
	return d.known[(p-d.from)*e : (p-d.from+1)*e]
}

// Observe implements Drafter: the target's rows at pos.. go into the
// head's cache. A row whose state before it is not known (the first
// after a rewind past what is kept, or a backend that hands over fewer
// rows) gets a zero state, as row 0 does: its drafts are worse, the
// target's tokens unchanged.
func (d *mtpDrafter) Observe(tokens []int32, pos int, h Hidden) {
	e, n := d.embd, len(tokens)
	rows := make([]float32, n*e) // the target's hidden state at pos+i
	if h.Rows > 0 && len(h.Data) >= h.Rows*e {
		k := min(h.Rows, n)
		copy(rows[(n-k)*e:], h.Data[(h.Rows-k)*e:h.Rows*e])
	}
	in := make([]float32, n*e) // row pos+i's: the state at pos+i-1
	if prev := d.hiddenAt(pos - 1); prev != nil {
		copy(in, prev)
	}
	copy(in[e:], rows[:(n-1)*e])
	if _, _, err := d.s.mtpRows(context.Background(), d.mb, tokens, in, pos); err != nil {
		// the head is behind: its next drafts are only worse, and a
		// failing head fails Propose too, where the error is seen
		d.known, d.from = nil, 0
		return
	}
	keep := d.hiddenAt(pos - 1)
	if keep != nil && pos > 0 {
		d.known, d.from = append(append(make([]float32, 0, (n+1)*e), keep...), rows...), pos-1
	} else {
		d.known, d.from = rows, pos
	}
}

// Settle implements Drafter: the target keeps positions < keep, so the
// states from keep on are no longer its.
func (d *mtpDrafter) Settle(keep int) {
	if keep <= d.from {
		d.known, d.from = nil, 0
		return
	}
	d.known = d.known[:min(len(d.known), (keep-d.from)*d.embd)]
}

// Propose implements Drafter: up to n drafts after history's last token
// (the target's latest sample, at position len(history)-1), none when
// the target's state before it is not known.
func (d *mtpDrafter) Propose(ctx context.Context, history []int32, n int) ([]Draft, error) {
	pos := len(history) - 1
	h := d.hiddenAt(pos - 1)
	if h == nil || pos < 0 {
		return nil, nil
	}
	n = min(n, d.s.ctxSize-pos)
	out := make([]Draft, 0, n)
	tok := history[pos]
	for i := 0; i < n; i++ {
		logits, y, err := d.s.mtpRows(ctx, d.mb, []int32{tok}, h, pos+i)
		if err != nil {
			return out, err
		}
		var cands []sample.Candidate
		tok, cands = draftArgmax(logits)
		out = append(out, Draft{Token: tok, Candidates: cands})
		h = y
	}
	return out, nil
}
