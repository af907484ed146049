package sample

// Head is the top of a next-token distribution reduced where the logits
// live (the Vulkan backend does it on the device), so that the whole
// vocabulary need not be read back each token.
type Head struct {
	IDs     []int32   // the best tokens, best first; ties by lower id
	Logits  []float32 // theirs
	Max     float32   // the largest logit
	Z       float64   // Σ exp(l − Max) over the whole vocabulary
	Entropy float64   // of the whole distribution, nats
}

// HeadSize is how many candidates SampleHead needs under p, or 0 when the
// step needs the whole vocabulary: penalties rewrite logits anywhere in it,
// and without top-k, top-p may reach past any fixed head. The panels show
// at least 10 candidates, so the head is never smaller.
func HeadSize(p Params, history []int32) int {
	p = p.clamped()
	if penalizes(p, history) || p.TopK == 0 {
		return 0
	}
	return max(p.TopK, (&Sampler{p: p}).candidateCount())
}

// SampleHead is Sample on a head of at least HeadSize(params, history)
// candidates. Only the ranking, truncation and draw run here; the full
// distribution's normalizer and entropy come with the head.
func (s *Sampler) SampleHead(h Head) Result {
	st, ok := s.evaluateHead(h)
	if !ok {
		return Result{Token: -1}
	}
	token := s.rank.top(1)[0]
	if s.p.Temperature > 0 {
		token = s.draw(st)
	}
	return s.headResult(h, st, token)
}

// PreviewHead is Preview on a head of at least HeadSize(p, history)
// candidates.
func PreviewHead(p Params, h Head) Result {
	s := &Sampler{p: p.clamped()}
	st, ok := s.evaluateHead(h)
	if !ok {
		return Result{Token: -1}
	}
	return s.headResult(h, st, s.rank.top(1)[0])
}

// headResult is result with the head's positions turned into token ids.
func (s *Sampler) headResult(h Head, st step, pos int32) Result {
	res := s.result(st, pos)
	res.Token = h.IDs[res.Token]
	for i := range res.Candidates {
		res.Candidates[i].ID = h.IDs[res.Candidates[i].ID]
	}
	return res
}

// evaluateHead runs the chain on the head's logits as a vocabulary of its
// own, which ranks them in the same order (the head is sorted, ties by id),
// with the whole vocabulary's softmax statistics.
func (s *Sampler) evaluateHead(h Head) (step, bool) {
	n := min(len(h.IDs), len(h.Logits))
	if n == 0 {
		return step{}, false
	}
	s.work = append(s.work[:0], h.Logits[:n]...)
	st := step{max: h.Max, z: h.Z, entropy: h.Entropy, head: true}
	s.penalized = false
	for i, l := range s.work {
		if l != l {
			s.work[i] = negInf
		}
	}
	return s.rankAndTruncate(st), true
}
