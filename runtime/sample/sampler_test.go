package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func flatLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func drawN(s *Sampler, logits []float32, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = s.Sample(logits, nil).Token
	}
	return out
}

func TestSeededDeterminism(t *testing.T) {
	logits := flatLogits(500, 1)
	p := with(func(p *Params) { p.Seed = 42; p.TopK = 100 })
	a := drawN(New(p), logits, 200)
	b := drawN(New(p), logits, 200)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different sequences")
	}
	p.Seed = 43
	if c := drawN(New(p), logits, 200); slices.Equal(a, c) {
		t.Fatal("a different seed gave the same sequence")
	}

	// A live change of seed reseeds: the sampler then matches a fresh one.
	s := New(p)
	drawN(s, logits, 17)
	p.Seed = 42
	s.SetParams(p)
	if got := drawN(s, logits, 200); !slices.Equal(got, a) {
		t.Fatal("SetParams with a new seed did not reseed")
	}

	// Changing other settings keeps the stream going rather than replaying it.
	s = New(p)
	first := drawN(s, logits, 50)
	q := p
	q.MinP = 0.0001 // keeps everything top-k 100 kept here
	s.SetParams(q)
	if again := drawN(s, logits, 50); slices.Equal(first, again) {
		t.Fatal("SetParams without a seed change restarted the generator")
	}
	if s.Params() != q.clamped() {
		t.Fatalf("Params() = %+v, want %+v", s.Params(), q.clamped())
	}
}

func TestGreedy(t *testing.T) {
	cases := []struct {
		name   string
		logits []float32
		p      Params
		want   int32
	}{
		{"argmax", []float32{0.1, 3, -2, 2.9}, off(), 1},
		{"tie goes to the lowest id", []float32{1, 5, 5, 2, 5}, off(), 1},
		{"negative temperature is greedy", []float32{0, 1, 2}, with(func(p *Params) { p.Temperature = -3 }), 2},
		{"greedy ignores top-p", []float32{4, 3, 2}, with(func(p *Params) { p.TopP = 0.01 }), 0},
		{"all -Inf picks id 0", []float32{negInf, negInf}, off(), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			if p.Temperature > 0 {
				p.Temperature = 0
			}
			s := New(p)
			for range 20 {
				res := s.Sample(tc.logits, nil)
				if res.Token != tc.want {
					t.Fatalf("token %d, want %d", res.Token, tc.want)
				}
				if len(res.Candidates) == 0 || res.Candidates[0].ID != tc.want || res.Candidates[0].Final != 1 {
					t.Fatalf("candidates %+v: want the chosen token first with Final 1", res.Candidates)
				}
				for _, c := range res.Candidates[1:] {
					if c.Final != 0 {
						t.Fatalf("id %d has Final %v under greedy", c.ID, c.Final)
					}
				}
			}
		})
	}
}

// TestSamplingFrequencies draws many tokens and checks each token's
// frequency against its reported Final within five standard errors.
func TestSamplingFrequencies(t *testing.T) {
	logits := []float32{2, 1.5, 1, 0.5, 0, -0.5, -1, -3}
	cases := []Params{
		with(func(p *Params) { p.Temperature = 1 }),
		with(func(p *Params) { p.Temperature = 0.7; p.TopK = 5 }),
		with(func(p *Params) { p.Temperature = 1.5; p.TopP = 0.8 }),
		with(func(p *Params) { p.Temperature = 1.2; p.MinP = 0.2 }),
	}
	const draws = 200000
	for _, p := range cases {
		s := New(p)
		final := map[int32]float64{}
		for _, c := range s.Sample(logits, nil).Candidates {
			final[c.ID] = float64(c.Final)
		}
		counts := map[int32]int{}
		for range draws {
			counts[s.Sample(logits, nil).Token]++
		}
		for id := range int32(len(logits)) {
			want := final[id]
			got := float64(counts[id]) / draws
			if want == 0 {
				if counts[id] != 0 {
					t.Errorf("%+v: cut token %d drawn %d times", p, id, counts[id])
				}
				continue
			}
			se := math.Sqrt(want * (1 - want) / draws)
			if math.Abs(got-want) > 5*se {
				t.Errorf("%+v: token %d frequency %.4f, Final %.4f (±%.4f)", p, id, got, want, 5*se)
			}
		}
	}
}

func TestNeverNaN(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		logits []float32
	}{
		{"all -Inf", []float32{negInf, negInf, negInf}},
		{"one +Inf", []float32{1, inf, 2}},
		{"two +Inf", []float32{inf, 0, inf, negInf}},
		{"+Inf and -Inf only", []float32{negInf, inf}},
		{"NaN entries", []float32{nan, 1, nan, 2}},
		{"all NaN", []float32{nan, nan}},
		{"huge", []float32{3e38, -3e38, 3e38, 1e38}},
		{"huge spread", []float32{maxFinite, -maxFinite, 0}},
		{"single token", []float32{5}},
		{"mostly -Inf", append(make([]float32, 3), negInf, negInf, negInf)},
	}
	params := []Params{
		Defaults(),
		off(),
		with(func(p *Params) { p.Temperature = 1e-30 }),
		with(func(p *Params) { p.Temperature = float32(math.Inf(1)) }),
		with(func(p *Params) { p.Temperature = nan; p.TopP = nan; p.MinP = nan }),
		with(func(p *Params) { p.TopK = 2; p.TopP = 0.5; p.MinP = 0.9 }),
		with(func(p *Params) { p.RepeatPenalty = 3; p.PresencePenalty = maxFinite; p.FrequencyPenalty = maxFinite }),
		with(func(p *Params) { p.RepeatPenalty = 0.5; p.PresencePenalty = -maxFinite }),
	}
	history := []int32{0, 1, 1, 2, 3}
	for _, tc := range cases {
		for _, p := range params {
			in := slices.Clone(tc.logits)
			s := New(p)
			for _, res := range []Result{s.Sample(in, history), Preview(p, in, history)} {
				if res.Token < 0 || int(res.Token) >= len(in) {
					t.Fatalf("%s %+v: token %d out of range", tc.name, p, res.Token)
				}
				if isNaN(res.Entropy) || res.Entropy < 0 {
					t.Errorf("%s %+v: entropy %v", tc.name, p, res.Entropy)
				}
				sum := 0.0
				for _, c := range res.Candidates {
					if isNaN(c.Logit) || isNaN(c.Prob) || isNaN(c.Final) {
						t.Errorf("%s %+v: NaN in %+v", tc.name, p, c)
					}
					if c.ID == res.Token && c.Cut {
						t.Errorf("%s %+v: drew a cut token %d", tc.name, p, c.ID)
					}
					sum += float64(c.Final)
				}
				if sum > 1+1e-5 {
					t.Errorf("%s %+v: Final sums to %v", tc.name, p, sum)
				}
			}
			for i := range in {
				if math.Float32bits(in[i]) != math.Float32bits(tc.logits[i]) {
					t.Fatalf("%s: logits modified", tc.name)
				}
			}
		}
	}
}

func isNaN(x float32) bool { return x != x }

func TestPreviewMatchesSample(t *testing.T) {
	logits := flatLogits(3000, 3)
	history := []int32{5, 9, 9, 2000}
	for _, p := range []Params{Defaults(), with(func(p *Params) { p.TopP = 0.5; p.RepeatPenalty = 1.3 })} {
		s := New(p)
		got := s.Sample(logits, history)
		pre := Preview(p, logits, history)
		if !slices.Equal(got.Candidates, pre.Candidates) || got.Entropy != pre.Entropy {
			t.Fatalf("Preview differs from Sample:\n%+v\n%+v", pre, got)
		}
		if pre.Token != pre.Candidates[0].ID {
			t.Fatalf("Preview token %d, want the most likely %d", pre.Token, pre.Candidates[0].ID)
		}
	}
}

func TestSampleDoesNotAllocateBeyondResult(t *testing.T) {
	logits := flatLogits(32000, 4)
	history := []int32{1, 2, 3, 3, 4}
	for _, p := range []Params{
		Defaults(),
		with(func(p *Params) { p.TopP = 0.9 }),
		with(func(p *Params) { p.Temperature = 0 }),
		with(func(p *Params) { p.MinP = 0.01 }),
		with(func(p *Params) { p.RepeatPenalty = 1.1; p.FrequencyPenalty = 0.1 }),
	} {
		s := New(p)
		s.Sample(logits, history) // grows the buffers once
		if n := testing.AllocsPerRun(20, func() { s.Sample(logits, history) }); n > 1 {
			t.Errorf("%+v: %v allocations per Sample, want ≤ 1 (the candidates)", p, n)
		}
	}
}
