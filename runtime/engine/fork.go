package engine

import (
	"fmt"

	"vkchat/runtime/sample"
)

// ForkPoint continues a reply from one of its steps with another token.
//
// Prefix is the reply's tokens before that step, exactly as generated (not
// re-tokenized text, which could split differently). The prompt plus Prefix
// is a prefix of what the KV cache holds after the original reply, so the
// prefill's cache reuse recomputes only the last of its tokens to get that
// step's logits again; the cache is in effect rewound to the fork point, as
// Forward overwrites every position from the one it is given. Token then
// takes the sampler's place at that step and generation goes on from there.
type ForkPoint struct {
	Prefix []int32
	Token  int32
}

// forceNext is sampleNext with the token chosen by the caller, s.mu held.
func (s *Session) forceNext(nd nextDist, token int32) (sample.Result, error) {
	if nd.head != nil {
		if res, ok := s.sampler.ForceHead(sampleHead(nd.head), token); ok {
			return res, nil
		}
		if err := s.wholeLogits(&nd); err != nil {
			return sample.Result{}, err
		}
	}
	res, err := s.sampler.Force(nd.logits, s.history, token)
	if err != nil {
		return sample.Result{}, fmt.Errorf("fork: %w", err)
	}
	return res, nil
}
