package sample

import "testing"

func BenchmarkSample(b *testing.B) {
	history := make([]int32, 64)
	for i := range history {
		history[i] = int32(i * 37 % 32000)
	}
	cases := []struct {
		name   string
		vocab  int
		p      Params
		peaked bool
	}{
		{"defaults/32000", 32000, Defaults(), false},
		{"penalties/32000", 32000, func() Params { p := Defaults(); p.RepeatPenalty = 1.1; p.FrequencyPenalty = 0.1; return p }(), false},
		{"greedy/32000", 32000, with(func(p *Params) { p.Temperature = 0 }), false},
		// Standard-normal logits are far flatter than a model's, so top-p
		// alone keeps most of the vocabulary: the worst case for sorting.
		{"top-p-only/32000", 32000, with(func(p *Params) { p.TopP = 0.95 }), false},
		{"top-p-only-peaked/32000", 32000, with(func(p *Params) { p.TopP = 0.95 }), true},
		{"no-truncation/32000", 32000, off(), false},
		{"defaults/152064", 152064, Defaults(), false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			logits := flatLogits(tc.vocab, 11)
			if tc.peaked {
				for i := range logits {
					logits[i] *= 4 // closer to an LLM's spread of logits
				}
			}
			s := New(tc.p)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits, history)
			}
		})
	}
}
