// Package sample turns logits into the next token the way llama.cpp's
// default sampler chain does (penalties → top-k → top-p → min-p →
// temperature → seeded draw) and reports the candidates it considered.
package sample

// Params are the user-facing sampler settings. Zero values mean "off"
// except where noted; Defaults returns llama.cpp's defaults.
type Params struct {
	Temperature      float32 // 0: greedy
	TopK             int     // 0: off
	TopP             float32 // 1: off
	MinP             float32 // 0: off
	RepeatPenalty    float32 // 1: off
	RepeatLastN      int     // how many recent tokens the penalties look at
	PresencePenalty  float32
	FrequencyPenalty float32
	Seed             uint64
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
	Cut   bool // removed by top-k, top-p or min-p
}

// Result is what one sampling step produced.
type Result struct {
	Token      int32
	Candidates []Candidate // the top candidates by Prob, most likely first
	Entropy    float32     // of the full distribution, in nats
}
