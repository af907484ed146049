package engine

import (
	"context"
	"encoding/hex"
	"fmt"

	"vkchat/runtime/backend"
)

// ErrNoMTP is returned where the model has no MTP head, or the backend
// cannot run it.
var ErrNoMTP = backend.ErrNoMTP

// mtpBackend is the session's backend as an MTP runner, or an error that
// says why there is none.
func (s *Session) mtpBackend() (backend.MTPBackend, error) {
	mb, ok := s.be.(backend.MTPBackend)
	if !ok {
		return nil, fmt.Errorf("%w that the %s backend can run (the cpu backend can)", ErrNoMTP, s.be.Name())
	}
	if !mb.HasMTP() {
		return nil, fmt.Errorf("%s: %w", s.file.Path, ErrNoMTP)
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
	ids := s.tok.Encode(prompt, true, false)
	if len(ids) == 0 {
		return nil, fmt.Errorf("prompt %q has no tokens", prompt)
	}
	if len(ids)+n+1 > s.ctxSize {
		return nil, fmt.Errorf("prompt of %d tokens plus %d to generate exceeds the context of %d", len(ids), n, s.ctxSize)
	}
	res := &EvalResult{Prompt: prompt, PromptTokens: ids, Greedy: []int32{}, PiecesHex: []string{}}
	s.mu.Lock()
	s.cached = s.cached[:0]
	s.mu.Unlock()
	s.rewindState(0)
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

// mtpDrafter drafts with a model's MTP head as llama.cpp's draft-mtp does
// (common/speculative.cpp:380-651; ../shared/docs/architectures-2026b.md,
// "Speculative loop"): the head's cache mirrors the target's verified
// rows, row p pairing x_p with the target's hidden state at p-1; a draft
// is the head's argmax, and each further draft feeds the previous draft
// with the head's own output at the next position.
type mtpDrafter struct {
	s    *Session
	mb   backend.MTPBackend
	embd int
	// carry is the target's hidden state at the row before the next one
	// the head will see (zeros before any); last is the hidden states of
	// the last mirrored batch, from which accept takes the next carry.
	carry, last []float32
	lastPos     int
}

func newMTPDrafter(s *Session, mb backend.MTPBackend) *mtpDrafter {
	e := s.model.Embd
	return &mtpDrafter{s: s, mb: mb, embd: e, carry: make([]float32, e)}
}

// reset forgets every row: the next mirror starts at position 0 with a
// zero state.
func (d *mtpDrafter) reset() { clear(d.carry) }

// mirror feeds the target's batch at positions pos.. (its tokens and
// their hidden states) into the head's cache: row pos+i pairs tokens[i]
// with the hidden state at pos+i-1, the first with the carried one. The
// head's logits for these rows are not needed. Until accept, the carry
// is the batch's last hidden state (every row verified).
func (d *mtpDrafter) mirror(ctx context.Context, tokens []int32, hidden []float32, pos int) error {
	e, n := d.embd, len(tokens)
	if len(hidden) != n*e {
		return fmt.Errorf("MTP mirror: %d hidden values for %d tokens", len(hidden), n)
	}
	h := make([]float32, n*e)
	copy(h, d.carry)
	copy(h[e:], hidden[:(n-1)*e])
	if _, _, err := d.s.mtpRows(ctx, d.mb, tokens, h, pos); err != nil {
		return err
	}
	d.last, d.lastPos = hidden, pos
	copy(d.carry, hidden[(n-1)*e:])
	return nil
}

// accept keeps the last mirrored batch up to its row k (the target kept
// tokens through position lastPos+k): the next draft's hidden state is
// the target's at that row. Rows after it are overwritten by the next
// call at their positions.
func (d *mtpDrafter) accept(k int) {
	e := d.embd
	copy(d.carry, d.last[k*e:(k+1)*e])
}

// draft returns up to n drafts after last, the token the target sampled
// at position pos (not yet run by it): the head's argmax at row pos with
// the carried state, then at pos+1.. with the previous draft and the
// head's own output.
func (d *mtpDrafter) draft(ctx context.Context, last int32, pos, n int) ([]int32, error) {
	var out []int32
	tok, h := last, d.carry
	for i := 0; i < n; i++ {
		logits, y, err := d.s.mtpRows(ctx, d.mb, []int32{tok}, h, pos+i)
		if err != nil {
			return out, err
		}
		tok = topID(logits)
		out = append(out, tok)
		h = y
	}
	return out, nil
}

// topID is the highest logit's id, the lower id on a tie (as topLogits
// and a top_k = 1 sampler order them).
func topID(logits []float32) int32 {
	best := 0
	for i, l := range logits {
		if l > logits[best] {
			best = i
		}
	}
	return int32(best)
}
