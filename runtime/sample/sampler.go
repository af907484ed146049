package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sampler draws tokens with a fixed chain and a seeded generator. It keeps
// its scratch buffers between calls because it runs once per generated
// token over the whole vocabulary. A Sampler is not safe for concurrent use.
type Sampler struct {
	p   Params
	pcg *rand.PCG
	rng *rand.Rand

	work    []float32 // penalised copy of the logits; the caller's stay untouched
	window  []int32   // penalty window, sorted for counting
	rank    ranking
	weights []float64 // temperature-scaled weights of the kept tokens
	// penalized says the last evaluation's penalties changed logits;
	// window then holds its sorted penalty window.
	penalized bool
}

// New returns a sampler with p clamped into range (see Params).
func New(p Params) *Sampler {
	s := &Sampler{pcg: rand.NewPCG(0, 0)}
	s.rng = rand.New(s.pcg)
	s.p = p.clamped()
	s.reseed()
	return s
}

// SetParams changes the settings between tokens. The generator is reseeded
// only when the seed changes, so adjusting, say, the temperature mid-reply
// does not replay the same random numbers.
func (s *Sampler) SetParams(p Params) {
	p = p.clamped()
	changed := p.Seed != s.p.Seed
	s.p = p
	if changed {
		s.reseed()
	}
}

// Params returns the settings in use, after clamping.
func (s *Sampler) Params() Params { return s.p }

func (s *Sampler) reseed() {
	// PCG wants two words; deriving the second from the seed keeps a
	// single user-visible seed while avoiding the all-zero state for 0.
	s.pcg.Seed(s.p.Seed, s.p.Seed^0x9e3779b97f4a7c15)
}

// Sample draws the next token from logits (one per vocabulary entry) after
// penalising the tokens in history, and reports the candidates. logits is
// not modified. An empty vocabulary yields Token -1.
func (s *Sampler) Sample(logits []float32, history []int32) Result {
	st, ok := s.evaluate(logits, history)
	if !ok {
		return Result{Token: -1}
	}
	token := s.rank.top(1)[0]
	if s.p.Temperature > 0 {
		token = s.draw(st)
	}
	return s.result(st, token)
}

// Preview reports what Sample would see with settings p, without drawing
// and without touching any sampler's generator; Token is the most likely
// token that survives truncation. It allocates its own scratch space, so it
// suits a settings panel rather than the generation loop.
func Preview(p Params, logits []float32, history []int32) Result {
	s := &Sampler{p: p.clamped()}
	st, ok := s.evaluate(logits, history)
	if !ok {
		return Result{Token: -1}
	}
	return s.result(st, s.rank.top(1)[0])
}

// draw picks one kept token with probability proportional to its weight.
func (s *Sampler) draw(st step) int32 {
	ids := s.keptIDs(st)
	u := s.rng.Float64() * st.weightSum
	cum := 0.0
	last := int32(-1)
	for i, w := range s.weights[:st.kept] {
		if w == 0 {
			continue
		}
		cum += w
		last = s.idAt(ids, i)
		if u < cum {
			return last
		}
	}
	// u can round up to the full sum; the last weighted token owns it.
	if last < 0 {
		return s.rank.top(1)[0]
	}
	return last
}

// result builds the candidate list: the top N by probability.
func (s *Sampler) result(st step, token int32) Result {
	ids := s.rank.top(s.candidateCount())
	res := Result{
		Token:      token,
		Candidates: make([]Candidate, len(ids)),
		Entropy:    float32(st.entropy),
		LogZ:       float64(st.max) + math.Log(st.z),
		TokenLogit: s.work[token],
		Funnel:     s.funnel(st, token),
	}
	for i, id := range ids {
		l := s.work[id]
		c := Candidate{ID: id, Logit: l, Prob: float32(weight(l, st.max) / st.z)}
		switch {
		case i >= st.kept:
			c.Cut, c.CutBy = true, st.cutBy(i)
		case s.p.Temperature == 0:
			if id == token {
				c.Final = 1
			}
		default:
			c.Final = float32(tempWeight(l, st.max, s.p.Temperature) / st.weightSum)
		}
		res.Candidates[i] = c
	}
	return res
}

// candidateCount follows the top-k setting so that the panel shows what
// top-k considered, within a size a panel can show.
func (s *Sampler) candidateCount() int { return min(max(s.p.TopK, 10), 40) }

// weight is exp(l - max) without the NaN that Inf - Inf would give: ties
// with the maximum (including +Inf, or every logit being -Inf) weigh 1.
func weight(l, max float32) float64 {
	if l == max {
		return 1
	}
	return expNonPos(float64(l) - float64(max))
}

// State is the generator's state, so a later run can draw the same
// numbers from this point (an export's replay).
func (s *Sampler) State() ([]byte, error) { return s.pcg.MarshalBinary() }

// SetState restores a state from State.
func (s *Sampler) SetState(b []byte) error {
	if err := s.pcg.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("sampler state: %w", err)
	}
	return nil
}
