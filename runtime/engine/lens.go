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
	ids := s.tok.Encode(prompt, true, false)
	if len(ids) == 0 {
		return nil, fmt.Errorf("prompt %q has no tokens", prompt)
	}
	if len(ids)+1 > s.ctxSize {
		return nil, fmt.Errorf("prompt of %d tokens exceeds the context of %d", len(ids), s.ctxSize)
	}
	k = max(1, min(k, s.model.Vocab))
	s.mu.Lock()
	s.cached = s.cached[:0]
	s.mu.Unlock()
	s.rewindState(0)
	var tops [][]backend.LensTop
	err := s.mapped(func() error {
		var err error
		tops, err = lb.Lens(ctx, ids, 0, k)
		return err
	})
	s.trackState(len(ids), err)
	if err != nil {
		return nil, fmt.Errorf("lens: %w", err)
	}
	res := &LensResult{Prompt: prompt, PromptTokens: ids, Layers: len(s.model.Layers)}
	for i, layers := range tops {
		p := LensPosition{Pos: i, Token: ids[i]}
		for l, t := range layers {
			if math.IsNaN(t.SumExp) || math.IsInf(t.SumExp, 0) || math.IsInf(t.Max, 0) {
				return nil, fmt.Errorf("lens at position %d, layer %d: %w", i, l, ErrNonFinite)
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
		res.Positions = append(res.Positions, p)
	}
	s.mu.Lock()
	s.cached = append(s.cached[:0], ids...)
	s.mu.Unlock()
	return res, nil
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
