package engine

import (
	"context"
	"fmt"
	"time"
)

// prefillChunk is how many prompt tokens one Forward call takes while a
// long prompt is read, so the caller hears how far it got. It is a multiple
// of every backend's internal batch, so splitting here adds no extra passes.
const prefillChunk = 128

// PrefillProgress reports how much of the prompt has been computed.
type PrefillProgress struct {
	Done, Total int // prompt tokens to compute (after KV-cache reuse)
	Elapsed     time.Duration
}

// ETA extrapolates the time left from the rate so far; 0 before the first
// chunk is done.
func (p PrefillProgress) ETA() time.Duration {
	if p.Done <= 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.Total-p.Done) / float64(p.Done))
}

// forwardChunked runs tokens from pos in prefillChunk pieces, calling
// progress after each piece but the last, and returns the logits after the
// last token.
func (s *Session) forwardChunked(ctx context.Context, tokens []int32, pos int, progress func(PrefillProgress)) ([]float32, error) {
	start := time.Now()
	if len(tokens) <= prefillChunk || progress == nil {
		return s.forward(ctx, tokens, pos, false)
	}
	for done := 0; ; {
		n := min(prefillChunk, len(tokens)-done)
		logits, err := s.forward(ctx, tokens[done:done+n], pos+done, false)
		if err != nil {
			return nil, fmt.Errorf("prompt tokens %d–%d of %d: %w", done, done+n, len(tokens), err)
		}
		done += n
		if done == len(tokens) {
			return logits, nil
		}
		progress(PrefillProgress{Done: done, Total: len(tokens), Elapsed: time.Since(start)})
	}
}
