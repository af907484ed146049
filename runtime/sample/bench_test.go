package sample

import "testing"

func BenchmarkSample(b *testing.B) {
	history := make([]int32, 64)
	for i := range history {
		history[i] = int32(i * 37 % 32000)
	}
	cases := []struct {
		name  string
		vocab int
		p     Params
	}{
		{"defaults/32000", 32000, Defaults()},
		{"penalties/32000", 32000, func() Params { p := Defaults(); p.RepeatPenalty = 1.1; p.FrequencyPenalty = 0.1; return p }()},
		{"greedy/32000", 32000, with(func(p *Params) { p.Temperature = 0 })},
		{"top-p-only/32000", 32000, with(func(p *Params) { p.TopP = 0.95 })},
		{"no-truncation/32000", 32000, off()},
		{"defaults/152064", 152064, Defaults()},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			logits := flatLogits(tc.vocab, 11)
			s := New(tc.p)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits, history)
			}
		})
	}
}
