// Package sample turns logits into the next token the way llama.cpp's
// default sampler chain does (penalties → top-k → top-p → min-p →
// temperature → seeded draw) and reports the candidates it considered.
package sample

// Params are the user-facing sampler settings. Zero values mean "off"
// except where noted; Defaults returns llama.cpp's defaults.
type Params struct {
	Temperature      float32 // 0: greedy; negative counts as 0
	TopK             int     // 0: off
	TopP             float32 // 1: off; values outside (0,1] also mean off
	MinP             float32 // 0: off; clamped to [0,1]
	RepeatPenalty    float32 // 1: off; ≤ 0 also means off
	RepeatLastN      int     // how many recent tokens the penalties look at; 0: none, negative: all
	PresencePenalty  float32 // subtracted once from every token in the window
	FrequencyPenalty float32 // subtracted once per occurrence in the window
	Seed             uint64  // every value, 0 included, is a fixed seed
}

// Defaults are llama.cpp's default sampler settings.
func Defaults() Params {
	return Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.0, RepeatLastN: 64, Seed: 0xdefa17}
}

// Candidate is one token of the next-token distribution.
type Candidate struct {
	ID    int32
	Logit float32 // raw logit after penalties
	// Prob is the probability in the full distribution (softmax of the
	// penalised logits at temperature 1), before any truncation.
	Prob float32
	// Final is the probability the token was actually drawn with, after
	// truncation and temperature; 0 when Cut.
	Final float32
	Cut   bool  // removed by top-k, top-p or min-p
	CutBy Stage // which of them, when Cut
}

// Result is what one sampling step produced.
type Result struct {
	Token      int32
	Candidates []Candidate // the top candidates by Prob, most likely first
	Entropy    float32     // of the full distribution, in nats
	// LogZ is log Σ exp(logit) over the whole vocabulary (after
	// penalties): a candidate's log-probability is its Logit − LogZ.
	LogZ float64
	// TokenLogit is the chosen token's logit (after penalties), so its
	// log-probability is known even when it is not among Candidates.
	TokenLogit float32
	// Funnel is what each stage of the chain left, in chain order.
	Funnel Funnel
}

// TokenLogProb is the natural log of the chosen token's probability in
// the full distribution, before truncation and temperature.
func (r Result) TokenLogProb() float64 { return float64(r.TokenLogit) - r.LogZ }

// clamped returns p with every field moved into the range the chain can
// use. Settings arrive from a UI and from config files, so out-of-range and
// NaN values are corrected here rather than rejected: a sampler must always
// be able to produce a token.
func (p Params) clamped() Params {
	d := Defaults()
	p.Temperature = finiteOr(p.Temperature, d.Temperature)
	if p.Temperature < 0 {
		p.Temperature = 0
	}
	if p.TopK < 0 {
		p.TopK = 0
	}
	// Outside (0,1] top-p has no meaning; treat it as off rather than as
	// "keep one token", which would silently turn the sampler greedy.
	if !(p.TopP > 0 && p.TopP < 1) {
		p.TopP = 1
	}
	p.MinP = finiteOr(p.MinP, 0)
	p.MinP = min(max(p.MinP, 0), 1)
	// A repeat penalty ≤ 0 would zero or flip the sign of logits.
	if !(p.RepeatPenalty > 0) || isInf(p.RepeatPenalty) {
		p.RepeatPenalty = 1
	}
	p.PresencePenalty = finiteOr(p.PresencePenalty, 0)
	p.FrequencyPenalty = finiteOr(p.FrequencyPenalty, 0)
	if p.RepeatLastN < 0 {
		p.RepeatLastN = -1
	}
	return p
}

func finiteOr(x, fallback float32) float32 {
	if x != x {
		return fallback
	}
	if isInf(x) {
		if x > 0 {
			return maxFinite
		}
		return -maxFinite
	}
	return x
}

const maxFinite = 3.40282346638528859811704183484516925440e+38

func isInf(x float32) bool { return x > maxFinite || x < -maxFinite }
