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
func TestMoERouteSigmoid(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(41))
	for _, c := range []struct {
		e, k         int
		norm         bool
		scale        float32
		groups, used int
	}{{8, 2, true, 2.5, 0, 0}, {128, 6, true, 1, 0, 0}, {32, 4, false, 0, 0, 0}, {8, 2, true, 1.8, 4, 2}, {64, 6, true, 2.5, 8, 3}} {
		t.Run(fmt.Sprintf("E%d/k%d/norm=%v/scale=%g/groups=%d-%d", c.e, c.k, c.norm, c.scale, c.used, c.groups), func(t *testing.T) {
			const ntok = 5
			stride := c.e + 1
			logits := make([]float32, ntok*stride)
			for i := range logits {
				logits[i] = float32(rng.NormFloat64() * 2)
			}
			bias := make([]float32, c.e)
			for i := range bias {
				bias[i] = float32(rng.NormFloat64() * 0.5)
			}
			rule := arch.Rule{Gating: arch.GatingSigmoid, Norm: c.norm, Scale: c.scale, Groups: c.groups, GroupsUsed: c.used}
			free := rule
			free.Groups, free.GroupsUsed = 0, 0
			lb, bb := deviceFloats(t, d, "logits", logits), deviceFloats(t, d, "bias", bias)
			ids, _ := d.NewBuffer("ids", uint64(4*ntok*c.k), vulkan.MemDevice)
			wts, _ := d.NewBuffer("wts", uint64(4*ntok*c.k), vulkan.MemDevice)
			log, _ := d.NewBuffer("log", uint64(4*2*c.k), vulkan.MemDevice)
			step := stepBuffer(t, d, ntok, 0, nil)
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return d.moeRouteRule(r, "route", rule, bb, c.e, c.k, lb, stride, ids, wts, log, 0, step, ntok)
			})
			gi, gw := readBack(t, ids, ntok*c.k), bytesF32(readBack(t, wts, ntok*c.k))
			reordered, grouped := false, c.groups == 0
			for tk := 0; tk < ntok; tk++ {
				row := slices.Clone(logits[tk*stride : tk*stride+c.e])
				sel, w := make([]int32, c.k), make([]float32, c.k)
				rule.Route(row, bias, make([]float32, c.e), make([]int32, c.e), sel, w)
				unbiased := make([]int32, c.k)
				arch.GatingTopKSoftmax.Route(slices.Clone(logits[tk*stride:tk*stride+c.e]), make([]int32, c.e), unbiased, make([]float32, c.k))
				reordered = reordered || !slices.Equal(sel, unbiased)
				ungrouped := make([]int32, c.k)
				free.Route(slices.Clone(logits[tk*stride:tk*stride+c.e]), bias, make([]float32, c.e), make([]int32, c.e), ungrouped, make([]float32, c.k))
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
}
