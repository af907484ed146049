package engine

import (
	"math"
	"slices"

	"vkchat/runtime/sample"
)

// TokenLogprob is one token's log-probability in the model's distribution.
type TokenLogprob struct {
	ID      int32
	Logprob float64
}

// modelLogprobs returns the chosen token's log-probability in the model's
// own distribution and, when penalties changed what the sampler saw, the
// model's likeliest tokens; with s.mu held. Without penalties the sampler's
// distribution is the model's and the result already has both.
func (s *Session) modelLogprobs(res sample.Result) (float64, []TokenLogprob) {
	if res.Funnel[0].Penalized == 0 || s.logits == nil || res.Token < 0 || int(res.Token) >= len(s.logits) {
		return res.TokenLogProb(), nil
	}
	logZ := logSumExp(s.logits)
	return float64(s.logits[res.Token]) - logZ, topLogprobs(s.logits, logZ, max(len(res.Candidates), 10))
}

// logSumExp is log Σ exp(l) over logits, NaN treated as −Inf as the
// sampler does.
func logSumExp(logits []float32) float64 {
	mx := math.Inf(-1)
	for _, l := range logits {
		if float64(l) > mx {
			mx = float64(l)
		}
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	sum := 0.0
	for _, l := range logits {
		if l == l {
			sum += math.Exp(float64(l) - mx)
		}
	}
	return mx + math.Log(sum)
}

// topLogprobs returns the n likeliest tokens, best first (ties by lower id).
func topLogprobs(logits []float32, logZ float64, n int) []TokenLogprob {
	n = min(n, len(logits))
	better := func(a, b int32) bool {
		la, lb := logits[a], logits[b]
		return la > lb || (la == lb && a < b)
	}
	top := make([]int32, 0, n+1)
	for id := range int32(len(logits)) {
		if logits[id] != logits[id] {
			continue
		}
		if len(top) == n && !better(id, top[n-1]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, id, func(a, b int32) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, i, id)
		if len(top) > n {
			top = top[:n]
		}
	}
	out := make([]TokenLogprob, len(top))
	for i, id := range top {
		out[i] = TokenLogprob{ID: id, Logprob: float64(logits[id]) - logZ}
	}
	return out
}
