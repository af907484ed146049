package arch

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refRoute is the DeepSeek-V3 rule in float64, written from the model's
// reference code (modeling_deepseek.py's MoEGate), not from Rule.Route:
// scores σ(l) or softmax(l); choice by score + bias within the groups
// whose two best biased scores sum highest; weights the unbiased scores
// of the chosen, over their sum when norm, × scale.
func refRoute(r Rule, logits, bias []float64, k int) ([]int, []float64) {
	n := len(logits)
	s := make([]float64, n)
	if r.Gating == GatingSigmoid {
		for i, l := range logits {
			s[i] = 1 / (1 + math.Exp(-l))
		}
	} else {
		mx, sum := slices.Max(logits), 0.0
		for i, l := range logits {
			s[i] = math.Exp(l - mx)
			sum += s[i]
		}
		for i := range s {
			s[i] /= sum
		}
	}
	choice := make([]float64, n)
	for i := range s {
		choice[i] = s[i]
		if bias != nil {
			choice[i] += bias[i]
		}
	}
	allowed := make([]bool, n)
	for i := range allowed {
		allowed[i] = r.Groups <= 1
	}
	if r.Groups > 1 {
		per := n / r.Groups
		type group struct {
			id    int
			score float64
		}
		var gs []group
		for g := 0; g < r.Groups; g++ {
			v := slices.Clone(choice[g*per : (g+1)*per])
			slices.Sort(v)
			gs = append(gs, group{g, v[per-1] + v[per-2]})
		}
		slices.SortStableFunc(gs, func(a, b group) int { return cmp.Compare(b.score, a.score) })
		for _, g := range gs[:r.GroupsUsed] {
			for i := g.id * per; i < (g.id+1)*per; i++ {
				allowed[i] = true
			}
		}
	}
	var ids []int
	for i := range choice {
		if allowed[i] {
			ids = append(ids, i)
		}
	}
	slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(choice[b], choice[a]) })
	ids = ids[:k]
	w := make([]float64, k)
	var sum float64
	for j, id := range ids {
		w[j] = s[id]
		sum += s[id]
	}
	for j := range w {
		if r.Norm {
			w[j] /= sum
		}
		if r.Scale != 0 {
			w[j] *= float64(r.Scale)
		}
	}
	return ids, w
}

// TestRuleRoute: the sigmoid and softmax rules with a selection bias,
// groups, renormalisation and a routed scale choose the experts the
// reference rule chooses, in its order, with its weights, on random
// logits whose top choices are well apart (a near-tie is a float32
// rounding, not the rule).
func TestRuleRoute(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 41))
	rules := []Rule{
		{Gating: GatingSigmoid, Norm: true, Scale: 1.8, Groups: 4, GroupsUsed: 2},
		{Gating: GatingSigmoid, Norm: true, Scale: 2.5},
		{Gating: GatingSoftmax},
		{Gating: GatingSoftmax, Groups: 8, GroupsUsed: 3, Scale: 16},
	}
	tested := 0
	for _, r := range rules {
		for trial := 0; trial < 300; trial++ {
			const n, k = 32, 4
			logits, bias := make([]float64, n), make([]float64, n)
			l32, b32 := make([]float32, n), make([]float32, n)
			for i := range logits {
				l32[i], b32[i] = float32(rng.NormFloat64()), float32(0.3*rng.NormFloat64())
				logits[i], bias[i] = float64(l32[i]), float64(b32[i])
			}
			wantIDs, wantW := refRoute(r, logits, bias, k)
			sel, wts := make([]int32, k), make([]float32, k)
			r.Route(slices.Clone(l32), b32, make([]float32, n), make([]int32, n), sel, wts)
			got := make([]int, k)
			for j, id := range sel {
				got[j] = int(id)
			}
			if !slices.Equal(got, wantIDs) {
				// a choice within float32 rounding of another is no test of the rule
				if nearTie(r, logits, bias) {
					continue
				}
				t.Fatalf("%v trial %d: experts %v, want %v", r, trial, got, wantIDs)
			}
			for j := range wts {
				if d := math.Abs(float64(wts[j]) - wantW[j]); d > 1e-5*math.Max(1, math.Abs(wantW[j])) {
					t.Fatalf("%v trial %d: weight %d is %g, want %g", r, trial, j, wts[j], wantW[j])
				}
			}
			tested++
		}
	}
	if tested < 1000 {
		t.Fatalf("only %d of 1200 draws were far from ties", tested)
	}
}

// nearTie reports whether two biased scores are within 1e-5.
func nearTie(r Rule, logits, bias []float64) bool {
	s := slices.Clone(logits)
	if r.Gating == GatingSigmoid {
		for i := range s {
			s[i] = 1 / (1 + math.Exp(-logits[i]))
		}
	} else {
		mx, sum := slices.Max(logits), 0.0
		for i := range s {
			s[i] = math.Exp(logits[i] - mx)
			sum += s[i]
		}
		for i := range s {
			s[i] /= sum
		}
	}
	for i := range s {
		s[i] += bias[i]
	}
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i]-s[i-1] < 1e-5 {
			return true
		}
	}
	return false
}

// TestRuleBiasChoosesOnly: the selection bias moves which experts are
// chosen but not their weights; the group limit keeps an expert whose
// group is not among the best out even when it scores highest alone.
func TestRuleBiasChoosesOnly(t *testing.T) {
	r := Rule{Gating: GatingSigmoid, Norm: false}
	logits := []float32{2, 1, 0, -1}
	sel, wts := make([]int32, 1), make([]float32, 1)
	r.Route(slices.Clone(logits), nil, make([]float32, 4), make([]int32, 4), sel, wts)
	if sel[0] != 0 {
		t.Fatalf("without a bias: expert %d, want 0", sel[0])
	}
	r.Route(slices.Clone(logits), []float32{0, 0, 0, 5}, make([]float32, 4), make([]int32, 4), sel, wts)
	if want := float32(1 / (1 + math.Exp(1))); sel[0] != 3 || math.Abs(float64(wts[0]-want)) > 1e-7 {
		t.Fatalf("bias on expert 3: expert %d weight %g, want 3 weighted σ(-1) = %g (unbiased)", sel[0], wts[0], want)
	}
	// groups {0,1} {2,3}: expert 0 is best alone, group {2,3} sums higher
	g := Rule{Gating: GatingSigmoid, Groups: 2, GroupsUsed: 1}
	logits = []float32{3, -6, 1.5, 1.4}
	g.Route(slices.Clone(logits), nil, make([]float32, 4), make([]int32, 4), sel, wts)
	if sel[0] != 2 {
		t.Fatalf("group-limited: expert %d, want 2 (expert 0's group sums lower)", sel[0])
	}
}
