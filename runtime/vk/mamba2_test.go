package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"vkchat/runtime/arch"

	"vkchat/runtime/vk/vulkan"
)

// moe_route.comp's sigmoid rule (nemotron_h_moe, arch.Rule.Route): the k
// best by σ + a selection bias, weighed by their own σ, renormalised or
// not, scaled or not. The bias is large enough to reorder the choice, so
// a kernel choosing by the weights alone, or weighing by the biased
// scores, fails; ids equal, weights within the exponential's last bits.
// With groups (deepseek2) only the best groups' experts are chosen, and
// the groups must change the choice somewhere for the case to count.
// The last case has no bias (a deepseek2 file without exp_probs_b): the
// kernel must add none, whatever the unused binding holds.
func TestMoERouteSigmoid(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(41))
	for _, c := range []routeCase{
		{e: 8, k: 2, norm: true, scale: 2.5, bias: true}, {e: 128, k: 6, norm: true, scale: 1, bias: true}, {e: 32, k: 4, bias: true},
		{e: 8, k: 2, norm: true, scale: 1.8, groups: 4, used: 2, bias: true}, {e: 64, k: 6, norm: true, scale: 2.5, groups: 8, used: 3, bias: true},
		{e: 64, k: 6, norm: true, scale: 2.5, groups: 8, used: 3},
	} {
		checkRouteRule(t, d, rng, arch.GatingSigmoid, c)
	}
}

// moe_route.comp's softmax rule (deepseek2 with expert_gating_func 1,
// DeepSeek-V2 and V2-Lite): a softmax over every expert in place of the
// σ, then the sigmoid rule's steps — the best groups by their top-2 sums
// (V2's group limit), a selection bias where the file has one, the
// weights renormalised or not and scaled or not — against arch.Rule.Route.
func TestMoERouteSoftmaxGroups(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(42))
	for _, c := range []routeCase{
		{e: 64, k: 6, groups: 8, used: 3, scale: 1},   // V2-Lite's shape: no renormalisation, no scale
		{e: 160, k: 6, groups: 8, used: 3, scale: 16}, // V2's: routed scale 16
		{e: 16, k: 3, norm: true, scale: 2.5, groups: 4, used: 2, bias: true},
		{e: 32, k: 4, norm: true, bias: true},
	} {
		checkRouteRule(t, d, rng, arch.GatingSoftmax, c)
	}
}

type routeCase struct {
	e, k         int
	norm         bool
	scale        float32
	groups, used int
	bias         bool // a selection bias (else none: moeRouteRule's bias nil)
}

// checkRouteRule runs moe_route.comp under gating g and c over five
// tokens of random logits and compares every token's ids (equal) and
// weights (within 1e-6) with arch.Rule.Route's. A biased case must have
// the bias change some choice, a grouped case the groups, or the case
// does not tell the rule from one without them.
func checkRouteRule(t *testing.T, d *gpu, rng *rand.Rand, g arch.Gating, c routeCase) {
	t.Helper()
	t.Run(fmt.Sprintf("E%d/k%d/norm=%v/scale=%g/groups=%d-%d/bias=%v", c.e, c.k, c.norm, c.scale, c.used, c.groups, c.bias), func(t *testing.T) {
		const ntok = 5
		stride := c.e + 1
		logits := make([]float32, ntok*stride)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 2)
		}
		var bias []float32
		var bb *vulkan.Buffer
		if c.bias {
			bias = make([]float32, c.e)
			for i := range bias {
				// probabilities sum to 1 under a softmax: a bias on
				// their scale, not σ's, is what reorders them
				sd := 0.5
				if g == arch.GatingSoftmax {
					sd = 0.5 / float64(c.e)
				}
				bias[i] = float32(rng.NormFloat64() * sd)
			}
			bb = deviceFloats(t, d, "bias", bias)
		}
		rule := arch.Rule{Gating: g, Norm: c.norm, Scale: c.scale, Groups: c.groups, GroupsUsed: c.used}
		free, plain := rule, rule
		free.Groups, free.GroupsUsed = 0, 0
		lb := deviceFloats(t, d, "logits", logits)
		ids, _ := d.NewBuffer("ids", uint64(4*ntok*c.k), vulkan.MemDevice)
		wts, _ := d.NewBuffer("wts", uint64(4*ntok*c.k), vulkan.MemDevice)
		log, _ := d.NewBuffer("log", uint64(4*2*c.k), vulkan.MemDevice)
		step := stepBuffer(t, d, ntok, 0, nil)
		runOnce(t, d, func(r *vulkan.Recorder) error {
			return d.moeRouteRule(r, "route", rule, bb, c.e, c.k, lb, stride, ids, wts, log, 0, step, ntok)
		})
		gi, gw := readBack(t, ids, ntok*c.k), bytesF32(readBack(t, wts, ntok*c.k))
		reordered, grouped := !c.bias, c.groups == 0
		for tk := 0; tk < ntok; tk++ {
			row := func() []float32 { return slices.Clone(logits[tk*stride : tk*stride+c.e]) }
			sel, w := make([]int32, c.k), make([]float32, c.k)
			rule.Route(row(), bias, make([]float32, c.e), make([]int32, c.e), sel, w)
			unbiased := make([]int32, c.k)
			plain.Route(row(), nil, make([]float32, c.e), make([]int32, c.e), unbiased, make([]float32, c.k))
			reordered = reordered || !slices.Equal(sel, unbiased)
			ungrouped := make([]int32, c.k)
			free.Route(row(), bias, make([]float32, c.e), make([]int32, c.e), ungrouped, make([]float32, c.k))
			grouped = grouped || !slices.Equal(sel, ungrouped)
			for j := 0; j < c.k; j++ {
				id := binary.LittleEndian.Uint32(gi[4*(tk*c.k+j):])
				if id != uint32(sel[j]) {
					t.Errorf("token %d slot %d: expert %d, want %d", tk, j, id, sel[j])
				}
				if e := math.Abs(float64(gw[tk*c.k+j] - w[j])); e > 1e-6*math.Max(1, math.Abs(float64(w[j]))) {
					t.Errorf("token %d slot %d: weight %g, want %g", tk, j, gw[tk*c.k+j], w[j])
				}
			}
		}
		if !reordered {
			t.Fatal("the bias never changed the choice: the test does not tell a biased choice from an unbiased one")
		}
		if !grouped {
			t.Fatal("the groups never changed the choice: the test does not tell a grouped choice from a free one")
		}
	})
}
