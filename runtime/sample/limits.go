package sample

import (
	"fmt"
	"math"
	"strconv"
)

// The ranges a user may set. The chat's slash commands, the command-line
// flags and the files that carry settings (saved conversations, logprob
// exports) are all checked against these, so a setting a command would
// refuse cannot come in through a file.
const (
	MaxTemperature = 5
	MinTopP        = 0.05
	MinRepeat      = 0.5
	MaxRepeat      = 3
	MaxPenalty     = 2 // presence and frequency, as llama.cpp's server bounds them
)

// RangeError is a setting outside its range, named by the key the files
// use for it.
type RangeError struct {
	Key    string
	Value  float64
	Lo, Hi float64
}

func (e *RangeError) Error() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return fmt.Sprintf("%s %s is out of range (%s to %s)", e.Key, f(e.Value), f(e.Lo), f(e.Hi))
}

// Check reports the first setting outside its range (NaN and infinities
// included), or nil. The ranges are the commands' except at the low end
// of top-p and the repeat penalty, where 0 is how a file (or a zero
// Params) says "off", as the sampler reads it.
func (p Params) Check() error {
	for _, c := range []struct {
		key    string
		v      float64
		lo, hi float64
	}{
		{"temperature", float64(p.Temperature), 0, MaxTemperature},
		{"top_k", float64(p.TopK), 0, math.MaxInt32},
		{"top_p", float64(p.TopP), 0, 1},
		{"min_p", float64(p.MinP), 0, 1},
		{"repeat_penalty", float64(p.RepeatPenalty), 0, MaxRepeat},
		{"repeat_last_n", float64(p.RepeatLastN), -1, math.MaxInt32},
		{"presence_penalty", float64(p.PresencePenalty), -MaxPenalty, MaxPenalty},
		{"frequency_penalty", float64(p.FrequencyPenalty), -MaxPenalty, MaxPenalty},
	} {
		if !(c.v >= c.lo && c.v <= c.hi) {
			return &RangeError{Key: c.key, Value: c.v, Lo: c.lo, Hi: c.hi}
		}
	}
	return nil
}
