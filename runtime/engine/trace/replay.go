package trace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
)

// Result is what a replay found.
type Result struct {
	Checked int // tokens generated again and compared
	// Given counts the tokens before the export's last forced one: a fork
	// keeps them from the reply it was forked from, so they are the
	// replay's prefix rather than generated again.
	Given int
}

// Mismatch is the first token a replay did not reproduce.
type Mismatch struct {
	Index             int
	Want, Got         int32
	WantText, GotText string
	WantLogp, GotLogp float64
	Ended             bool // the replay stopped before this token
	// Layer >= 0: the token is the same but layer Layer routed it to
	// other experts (or with other weights) than recorded.
	Layer                   int
	WantExperts, GotExperts Routing
}

func (e *Mismatch) Error() string {
	switch {
	case e.Ended:
		return fmt.Sprintf("replay ended before token %d (recorded %d %q)", e.Index, e.Want, e.WantText)
	case e.Want != e.Got:
		return fmt.Sprintf("token %d differs: recorded %d %q (logprob %.6f), replay %d %q (logprob %.6f)",
			e.Index, e.Want, e.WantText, e.WantLogp, e.Got, e.GotText, e.GotLogp)
	}
	if e.Layer >= 0 {
		return fmt.Sprintf("token %d (%d %q) is the same but layer %d routed it differently: recorded experts %v weights %v, replay %v weights %v",
			e.Index, e.Want, e.WantText, e.Layer, e.WantExperts.IDs, e.WantExperts.Weights, e.GotExperts.IDs, e.GotExperts.Weights)
	}
	return fmt.Sprintf("token %d (%d %q) is the same but its logprob differs: recorded %v, replay %v (Δ %.3g)",
		e.Index, e.Want, e.WantText, e.WantLogp, e.GotLogp, e.GotLogp-e.WantLogp)
}

// Replay generates an export's tokens again on s, which must be loaded as
// the header says, and returns a *Mismatch at the first token or
// log-probability that differs. The sampler starts from the recorded
// state; a forked reply continues from its recorded prefix with its forced
// token.
func Replay(ctx context.Context, s *engine.Session, h Header, toks []Token) (Result, error) {
	if len(toks) == 0 {
		return Result{}, errors.New("no tokens to replay")
	}
	msgs := h.Messages
	if h.Template == "none" || len(msgs) == 0 {
		msgs = []chat.Message{{Role: chat.RoleUser, Content: h.Prompt}}
	}
	start := 0
	for i, t := range toks {
		if t.Forced {
			start = i
		}
	}
	// The settings in force at the first replayed token; then the
	// recorded state, since a changed seed reseeds the sampler.
	p := h.Params
	for _, t := range toks[:start+1] {
		if t.Params != nil {
			p = *t.Params
		}
	}
	s.SetParams(p.Sample())
	if len(h.SamplerState) > 0 {
		if err := s.SetSamplerState(h.SamplerState); err != nil {
			return Result{}, fmt.Errorf("field \"sampler_state\": %w", err)
		}
	}
	req := engine.Request{Messages: msgs, MaxTokens: len(toks), DisableThinking: h.DisableThinking, ReasoningEffort: h.ReasoningEffort}
	if toks[start].Forced {
		prefix := make([]int32, start)
		for i := range prefix {
			prefix[i] = toks[i].ID
		}
		req.Fork = &engine.ForkPoint{Prefix: prefix, Token: toks[start].ID}
	}
	var got []engine.TokenInfo
	err := s.Generate(ctx, req, func(ev engine.Event) {
		if ev.Kind != engine.EventToken {
			return
		}
		got = append(got, *ev.Token)
		// emit runs before the next token is drawn, so a change of
		// settings lands exactly where it did when the export was made.
		if next := start + len(got); next < len(toks) && toks[next].Params != nil {
			s.SetParams(toks[next].Params.Sample())
		}
	})
	res := Result{Given: start}
	if err != nil {
		return res, err
	}
	for i, want := range toks[start:] {
		m := &Mismatch{Index: start + i, Want: want.ID, WantText: s.TokenText(want.ID), WantLogp: want.Logprob, Layer: -1}
		if i >= len(got) {
			m.Ended = true
			return res, m
		}
		g := got[i]
		m.Got, m.GotText, m.GotLogp = g.ID, s.TokenText(g.ID), g.LogProb
		if g.ID != want.ID || g.LogProb != want.Logprob {
			return res, m
		}
		if l := routingDiff(want.Experts, TokenOf(g, s.TokenText).Experts); l >= 0 {
			m.Layer = l
			m.WantExperts = want.Experts[l]
			if l < len(g.Experts) {
				m.GotExperts = Routing{IDs: g.Experts[l].Experts, Weights: g.Experts[l].Weights}
			}
			return res, m
		}
		res.Checked++
	}
	return res, nil
}

// routingDiff is the first layer whose recorded routing the replay did not
// reproduce, or -1; an export without routing (a dense model, or one
// written before routing was recorded) checks nothing.
func routingDiff(want, got []Routing) int {
	if len(want) == 0 {
		return -1
	}
	for l := range want {
		if l >= len(got) || !slices.Equal(want[l].IDs, got[l].IDs) || !slices.Equal(want[l].Weights, got[l].Weights) {
			return l
		}
	}
	return -1
}
