package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
)

// EvalStep is the top of the next-token distribution after one position,
// each entry [id, logit, probability] as in llama.cpp's reference dumps.
type EvalStep struct {
	Pos int          `json:"pos"`
	Top [][3]float64 `json:"top"`
	// With the MTP head (EvaluateMTP, as synth-qwen35mtp-*.json lays it
	// out): the token at Pos, the one after it, and the head's top for
	// the token after that (its row at Pos+1 with h at Pos).
	Token     *int32       `json:"token,omitempty"`
	NextToken *int32       `json:"next_token,omitempty"`
	MTPTop    [][3]float64 `json:"mtp_top,omitempty"`
}

// EvalResult has exactly the shape of shared/reference/*.json.
type EvalResult struct {
	Prompt       string     `json:"prompt"`
	PromptTokens []int32    `json:"prompt_tokens"`
	Steps        []EvalStep `json:"steps"`
	Greedy       []int32    `json:"greedy"`
	PiecesHex    []string   `json:"pieces_hex"`
	Text         string     `json:"text"`
	// MTPPos0Top is the MTP head's row 0 (the first token, h zero);
	// EvaluateMTP only.
	MTPPos0Top [][3]float64 `json:"mtp_pos0_top,omitempty"`
}

// evalPrompt tokenizes an evaluation's prompt (with BOS, no special
// parsing), checks that it and n tokens to generate fit the context, and
// empties the cache and the recurrent state for a run from position 0.
// The caller holds genMu.
func (s *Session) evalPrompt(prompt string, n int) ([]int32, error) {
	ids := s.tok.Encode(prompt, true, false)
	if len(ids) == 0 {
		return nil, fmt.Errorf("prompt %q has no tokens", prompt)
	}
	if len(ids)+n+1 > s.ctxSize {
		if n == 0 {
			return nil, fmt.Errorf("prompt of %d tokens exceeds the context of %d", len(ids), s.ctxSize)
		}
		return nil, fmt.Errorf("prompt of %d tokens plus %d to generate exceeds the context of %d", len(ids), n, s.ctxSize)
	}
	s.mu.Lock()
	s.cached = s.cached[:0]
	s.mu.Unlock()
	s.rewindState(0)
	return ids, nil
}

// Evaluate tokenizes prompt (with BOS, no special parsing), records the
// top-k distribution after every prompt position (teacher-forced), then
// decodes n tokens greedily recording each step. It starts from an empty
// cache and leaves it holding the evaluated tokens.
func (s *Session) Evaluate(ctx context.Context, prompt string, n, topK int) (*EvalResult, error) {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	ids, err := s.evalPrompt(prompt, n)
	if err != nil {
		return nil, err
	}
	res := &EvalResult{Prompt: prompt, PromptTokens: ids, Greedy: []int32{}, PiecesHex: []string{}}
	all, err := s.forward(ctx, ids, 0, true)
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	vocab := s.model.Vocab
	if err := checkFinite(nextDist{logits: all}, 0, s.file.Path); err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	for i := range ids {
		res.Steps = append(res.Steps, EvalStep{Pos: i, Top: topLogits(all[i*vocab:(i+1)*vocab], topK)})
	}
	var logits []float32
	pos := len(ids)
	var text []byte
	for g := 0; g < n; g++ {
		next := int32(res.Steps[len(res.Steps)-1].Top[0][0])
		if s.tok.IsEOG(next) {
			break
		}
		res.Greedy = append(res.Greedy, next)
		piece := s.tok.Piece(next)
		res.PiecesHex = append(res.PiecesHex, hex.EncodeToString(piece))
		text = append(text, piece...)
		if logits, err = s.forward(ctx, []int32{next}, pos, false); err != nil {
			return nil, fmt.Errorf("decode step %d: %w", g, err)
		}
		if err := checkFinite(nextDist{logits: logits}, g+1, s.file.Path); err != nil {
			return nil, fmt.Errorf("decode step %d: %w", g, err)
		}
		pos++
		res.Steps = append(res.Steps, EvalStep{Pos: pos - 1, Top: topLogits(logits, topK)})
	}
	res.Text = string(text)
	s.mu.Lock()
	s.cached = append(s.cached[:0], ids...)
	s.cached = append(s.cached, res.Greedy...)
	s.mu.Unlock()
	return res, nil
}

// topLogits returns the k highest logits with their softmax probabilities
// over the whole vocabulary, most likely first (ties by lower id).
func topLogits(logits []float32, k int) [][3]float64 {
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = math.Max(mx, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - mx)
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	k = min(k, len(idx))
	out := make([][3]float64, k)
	for i := 0; i < k; i++ {
		l := float64(logits[idx[i]])
		out[i] = [3]float64{float64(idx[i]), l, math.Exp(l-mx) / sum}
	}
	return out
}
