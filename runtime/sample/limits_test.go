package sample

import (
	"errors"
	"math"
	"testing"
)

// Check accepts the defaults and the edges of each range and names the
// first setting outside one, NaN included.
func TestCheck(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name string
		edit func(*Params)
		key  string // "" = accepted
	}{
		{"defaults", func(*Params) {}, ""},
		{"greedy, everything off", func(p *Params) { p.Temperature, p.TopK, p.TopP, p.MinP, p.RepeatPenalty = 0, 0, 1, 0, 1 }, ""},
		{"edges", func(p *Params) {
			p.Temperature, p.TopP, p.RepeatPenalty, p.RepeatLastN = MaxTemperature, MinTopP, MaxRepeat, -1
		}, ""},
		{"zero: all off", func(p *Params) { *p = Params{} }, ""},
		{"repeat 4", func(p *Params) { p.RepeatPenalty = 4 }, "repeat_penalty"},
		{"repeat -3", func(p *Params) { p.RepeatPenalty = -3 }, "repeat_penalty"},
		{"temperature NaN", func(p *Params) { p.Temperature = nan }, "temperature"},
		{"top-k negative", func(p *Params) { p.TopK = -1 }, "top_k"},
		{"top-p 2", func(p *Params) { p.TopP = 2 }, "top_p"},
		{"min-p 1.5", func(p *Params) { p.MinP = 1.5 }, "min_p"},
		{"presence 9", func(p *Params) { p.PresencePenalty = 9 }, "presence_penalty"},
		{"last-n -2", func(p *Params) { p.RepeatLastN = -2 }, "repeat_last_n"},
	}
	for _, c := range cases {
		p := Defaults()
		c.edit(&p)
		err := p.Check()
		var re *RangeError
		switch {
		case c.key == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.key != "" && (!errors.As(err, &re) || re.Key != c.key):
			t.Errorf("%s: %v, want a range error for %s", c.name, err, c.key)
		}
	}
}
