package engine

import (
	"context"
	"errors"
	"fmt"
	"math"

	"vkchat/runtime/backend"
)

// ErrNoLens is returned where the backend cannot read the logit lens.
var ErrNoLens = errors.New("this backend cannot compute the logit lens")

// LensLayer is one layer's lens at one position: the top candidates as
// [id, logit, probability] (probability over the whole vocabulary).
type LensLayer struct {
	Layer int          `json:"layer"`
	Top   [][3]float64 `json:"top"`
}

// LensPosition is the lens at one prompt position, whose distribution
// predicts the next token: every layer's top, the argmax per layer, and
// the layer from which the argmax equals the last layer's at every later
// layer (where the model's answer settled).
type LensPosition struct {
	Pos         int         `json:"pos"`
	Token       int32       `json:"token"`
	Layers      []LensLayer `json:"layers"`
	Top1ByLayer []int32     `json:"top1_by_layer"`
	SettleLayer int         `json:"settle_layer"`
}

// LensResult has the shape of shared/reference/lens/*.json's positions.
type LensResult struct {
	Prompt       string         `json:"prompt"`
	PromptTokens []int32        `json:"prompt_tokens"`
	Layers       int            `json:"n_layer"`
	Positions    []LensPosition `json:"positions"`
}

// EvaluateLens tokenizes prompt (with BOS, no special parsing) and reads
// the logit lens at every prompt position (teacher-forced), the top k per
// layer. It starts from an empty cache and leaves it holding the prompt.
func (s *Session) EvaluateLens(ctx context.Context, prompt string, k int) (*LensResult, error) {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	lb, ok := s.be.(backend.LensBackend)
	if !ok {
		return nil, fmt.Errorf("%w (%s backend; the cpu backend can)", ErrNoLens, s.be.Name())
	}
	ids, err := s.evalPrompt(prompt, 0)
	if err != nil {
		return nil, err
	}
	k = max(1, min(k, s.model.Vocab))
	tops, err := s.lens(ctx, lb, ids, 0, k)
	if err != nil {
		return nil, err
	}
	res := &LensResult{Prompt: prompt, PromptTokens: ids, Layers: len(s.model.Layers)}
	for i, layers := range tops {
		p, err := lensPosition(i, ids[i], layers)
		if err != nil {
			return nil, err
		}
		res.Positions = append(res.Positions, p)
	}
	s.mu.Lock()
	s.cached = append(s.cached[:0], ids...)
	s.mu.Unlock()
	return res, nil
}

// LensAt reads the logit lens at the last of tokens (a conversation's
// tokens up to an inspected one, whose distribution predicts the next),
// the top k per layer. Like a prefill it reuses the cached prefix and
// leaves the cache holding tokens; only the positions after the prefix
// run, tapped.
func (s *Session) LensAt(ctx context.Context, tokens []int32, k int) (*LensPosition, error) {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	lb, ok := s.be.(backend.LensBackend)
	if !ok {
		return nil, fmt.Errorf("%w (%s backend; the cpu backend can)", ErrNoLens, s.be.Name())
	}
	if len(tokens) == 0 || len(tokens) > s.ctxSize {
		return nil, fmt.Errorf("lens of %d tokens: want 1 to the context's %d", len(tokens), s.ctxSize)
	}
	k = max(1, min(k, s.model.Vocab))
	s.mu.Lock()
	reuse := 0
	for reuse < len(s.cached) && reuse < len(tokens) && s.cached[reuse] == tokens[reuse] {
		reuse++
	}
	reuse = min(reuse, len(tokens)-1) // the last token runs: its lens is wanted
	s.mu.Unlock()
	from := s.rewindState(reuse)
	s.mu.Lock()
	s.cached = s.cached[:from]
	s.mu.Unlock()
	if _, err := s.reread(ctx, tokens, from, reuse); err != nil {
		return nil, fmt.Errorf("lens: read %d cached tokens again: %w", reuse-from, err)
	}
	tops, err := s.lens(ctx, lb, tokens[reuse:], reuse, k)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cached = append(s.cached[:reuse], tokens[reuse:]...)
	s.mu.Unlock()
	last := len(tokens) - 1
	p, err := lensPosition(last, tokens[last], tops[len(tops)-1])
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// lens is lb.Lens, guarded by mapped as forward is: tokens at positions
// pos.., the state tracked to their end.
func (s *Session) lens(ctx context.Context, lb backend.LensBackend, tokens []int32, pos, k int) ([][]backend.LensTop, error) {
	var tops [][]backend.LensTop
	err := s.mapped(func() error {
		var err error
		tops, err = lb.Lens(ctx, tokens, pos, k)
		return err
	})
	s.trackState(pos+len(tokens), err)
	if err != nil {
		return nil, fmt.Errorf("lens: %w", err)
	}
	return tops, nil
}

// lensPosition turns one position's per-layer tops into probabilities.
func lensPosition(pos int, token int32, layers []backend.LensTop) (LensPosition, error) {
	p := LensPosition{Pos: pos, Token: token}
	for l, t := range layers {
		if math.IsNaN(t.SumExp) || math.IsInf(t.SumExp, 0) || math.IsInf(t.Max, 0) {
			return p, fmt.Errorf("lens at position %d, layer %d: %w", pos, l, ErrNonFinite)
		}
		ly := LensLayer{Layer: l}
		for j, id := range t.IDs {
			lg := float64(t.Logits[j])
			ly.Top = append(ly.Top, [3]float64{float64(id), lg, math.Exp(lg-t.Max) / t.SumExp})
		}
		p.Layers = append(p.Layers, ly)
		p.Top1ByLayer = append(p.Top1ByLayer, t.IDs[0])
	}
	p.SettleLayer = settleLayer(p.Top1ByLayer)
	return p, nil
}

// settleLayer is the first layer from which the argmax equals the last
// layer's at every later layer.
func settleLayer(top1 []int32) int {
	if len(top1) == 0 {
		return 0
	}
	last := top1[len(top1)-1]
	l := len(top1) - 1
	for l > 0 && top1[l-1] == last {
		l--
	}
	return l
}
