package sample

import (
	"math"
	"testing"
)

func TestClamp(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	cases := []struct {
		name string
		in   Params
		want func(Params) bool
	}{
		{"negative temperature → 0", Params{Temperature: -1}, func(p Params) bool { return p.Temperature == 0 }},
		{"NaN temperature → default", Params{Temperature: nan}, func(p Params) bool { return p.Temperature == Defaults().Temperature }},
		{"infinite temperature stays finite", Params{Temperature: inf}, func(p Params) bool { return p.Temperature == maxFinite }},
		{"negative top-k → off", Params{TopK: -5}, func(p Params) bool { return p.TopK == 0 }},
		{"top-p 0 → off", Params{TopP: 0}, func(p Params) bool { return p.TopP == 1 }},
		{"top-p above 1 → off", Params{TopP: 1.5}, func(p Params) bool { return p.TopP == 1 }},
		{"top-p NaN → off", Params{TopP: nan}, func(p Params) bool { return p.TopP == 1 }},
		{"top-p inside kept", Params{TopP: 0.3}, func(p Params) bool { return p.TopP == 0.3 }},
		{"min-p negative → 0", Params{MinP: -0.1}, func(p Params) bool { return p.MinP == 0 }},
		{"min-p above 1 → 1", Params{MinP: 2}, func(p Params) bool { return p.MinP == 1 }},
		{"repeat penalty 0 → off", Params{RepeatPenalty: 0}, func(p Params) bool { return p.RepeatPenalty == 1 }},
		{"repeat penalty negative → off", Params{RepeatPenalty: -2}, func(p Params) bool { return p.RepeatPenalty == 1 }},
		{"repeat penalty kept", Params{RepeatPenalty: 1.1}, func(p Params) bool { return p.RepeatPenalty == 1.1 }},
		{"NaN presence → 0", Params{PresencePenalty: nan}, func(p Params) bool { return p.PresencePenalty == 0 }},
		{"negative window → all", Params{RepeatLastN: -7}, func(p Params) bool { return p.RepeatLastN == -1 }},
		{"seed kept", Params{Seed: 0}, func(p Params) bool { return p.Seed == 0 }},
	}
	for _, tc := range cases {
		if got := New(tc.in).Params(); !tc.want(got) {
			t.Errorf("%s: got %+v", tc.name, got)
		}
	}
	if d := Defaults(); New(d).Params() != d {
		t.Errorf("defaults changed by clamping: %+v", New(d).Params())
	}
}
