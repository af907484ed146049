package sample

import "math"

// step is one evaluation of the chain over the penalised logits in
// Sampler.work, whose ranking is in Sampler.rank.
type step struct {
	max       float32 // largest penalised logit
	z         float64 // Σ weight over the vocabulary: the full softmax's denominator
	entropy   float64 // of the full distribution, nats
	kept      int     // tokens surviving top-k, top-p and min-p: a prefix of the ranking
	stages    stageCounts
	weightSum float64 // Σ temperature weights of the kept tokens (0 when greedy)
	head      bool    // work holds only the head of the vocabulary (SampleHead); z is the whole one's
}

var negInf = float32(math.Inf(-1))

// evaluate runs penalties → top-k → top-p → min-p → temperature, stopping
// short of the draw. It reports false for an empty vocabulary.
func (s *Sampler) evaluate(logits []float32, history []int32) (step, bool) {
	v := len(logits)
	if v == 0 {
		return step{}, false
	}
	if cap(s.work) < v {
		s.work = make([]float32, v)
	}
	work := s.work[:v]
	s.work = work
	st := step{max: negInf}
	for i, l := range logits {
		// NaN has no place in an order; a model emitting one for a
		// token has in effect ruled that token out.
		if l != l {
			l = negInf
		}
		work[i] = l
		if l > st.max {
			st.max = l
		}
	}
	s.penalized = penalize(work, history, s.p, &s.window)
	if s.penalized {
		st.max = negInf
		for _, l := range work {
			if l > st.max {
				st.max = l
			}
		}
	}
	st.z, st.entropy = softmaxStats(work, st.max)
	return s.rankAndTruncate(st), true
}

// rankAndTruncate ranks s.work and runs top-k → top-p → min-p and the
// temperature weights for st, whose max, z and entropy are set.
func (s *Sampler) rankAndTruncate(st step) step {
	s.rank.reset(s.work)
	// Rank once for the longest prefix nearly every step needs (the
	// candidate list, which also covers top-k's survivors for k ≤ 40), so
	// later, shorter requests are free.
	s.rank.top(s.candidateCount())
	st.kept = s.truncate(&st)
	if s.p.Temperature > 0 {
		st.weightSum = s.temperatureWeights(st)
	}
	return st
}

// softmaxStats returns the softmax denominator relative to max and the
// entropy, using H = log Z − Σ x·e^x / Z with x = l − max, so one pass
// suffices and no probability vector is stored.
func softmaxStats(work []float32, mx float32) (z, entropy float64) {
	var xw float64
	m := float64(mx)
	for _, l := range work {
		if l == mx {
			z++
			continue
		}
		x := float64(l) - m
		e := expNonPos(x)
		if e == 0 {
			continue // also keeps -Inf·0 out of the sum
		}
		z += e
		xw += x * e
	}
	entropy = math.Log(z) - xw/z
	return z, max(entropy, 0)
}

// truncate applies top-k, then top-p over the top-k survivors'
// renormalised distribution, then min-p, as llama.cpp's default chain does;
// all three keep a prefix of the ranking, so only its length is returned.
// Top-p and min-p see the logits before temperature, as in llama.cpp.
// Each stage's own count goes to st.stages for the funnel.
func (s *Sampler) truncate(st *step) int {
	v := len(s.work)
	k := v
	if s.p.TopK > 0 {
		k = min(s.p.TopK, v)
	}
	kept := k
	sc := stageCounts{topK: k, topP: k, topPExact: true, minP: k}
	if k < v || st.head {
		sc.weightK = 0
		for _, id := range s.rank.top(k) {
			sc.weightK += weight(s.work[id], st.max)
		}
	} else {
		sc.weightK = st.z
	}

	if s.p.MinP > 0 {
		logMinP := math.Log(float64(s.p.MinP))
		keep := func(l float32) bool { return l == st.max || float64(l)-float64(st.max) >= logMinP }
		m := 0
		if k < v {
			for _, id := range s.rank.top(k) {
				if !keep(s.work[id]) {
					break
				}
				m++
			}
		} else {
			for _, l := range s.work {
				if keep(l) {
					m++
				}
			}
		}
		// min-p runs after top-p, but its threshold is the maximum logit,
		// which top-p always keeps, so it can be counted first; top-p then
		// need not walk past it to find what is kept.
		kept = min(kept, m)
		sc.minP = m
	}

	if s.p.TopP < 1 {
		target := float64(s.p.TopP) * sc.weightK
		cum := 0.0
		var ids []int32
		// Walking on past what min-p keeps tells the funnel where top-p
		// itself would have stopped, and which of the two cut each shown
		// candidate; the walk is bounded so a vocabulary without top-k
		// is never ranked much further than the chain needs.
		walk := min(k, max(kept, funnelWalk))
		found := false
		for i := range walk {
			if i == len(ids) {
				ids = s.rank.top(min(walk, max(2*len(ids), 64)))
			}
			cum += weight(s.work[ids[i]], st.max)
			if cum >= target {
				sc.topP = i + 1
				found = true
				break
			}
		}
		if !found {
			sc.topP, sc.topPExact = walk, walk == k
		}
		kept = min(kept, sc.topP)
	}
	st.stages = sc
	return kept
}

// temperatureWeights fills s.weights with exp((l − max)/T) for the kept
// tokens, in the order keptIDs walks them, and returns their sum.
func (s *Sampler) temperatureWeights(st step) float64 {
	if cap(s.weights) < st.kept {
		s.weights = make([]float64, st.kept)
	}
	s.weights = s.weights[:st.kept]
	ids := s.keptIDs(st)
	sum := 0.0
	for i := range s.weights {
		w := tempWeight(s.work[s.idAt(ids, i)], st.max, s.p.Temperature)
		s.weights[i] = w
		sum += w
	}
	return sum
}

// keptIDs returns the kept tokens in rank order, or nil when every token
// is kept: then ids are walked in vocabulary order and no sort is needed.
func (s *Sampler) keptIDs(st step) []int32 {
	if st.kept == len(s.work) {
		return nil
	}
	return s.rank.top(st.kept)
}

func (s *Sampler) idAt(ids []int32, i int) int32 {
	if ids == nil {
		return int32(i)
	}
	return ids[i]
}

// tempWeight subtracts the maximum before dividing by T: dividing first
// would overflow huge logits to Inf at small temperatures.
func tempWeight(l, mx, t float32) float64 {
	if l == mx {
		return 1
	}
	return expNonPos((float64(l) - float64(mx)) / float64(t))
}
