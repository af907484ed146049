package panels

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

func goldenData() (Metrics, Memory, Probs) {
	info := engine.ModelInfo{Layers: 32, KVHeads: 8, HeadDim: 128, KVType: "f16", ContextSize: 4096}
	stats := engine.Stats{ContextUsed: 1234, ContextSize: 4096, KVPerToken: 131072, KVUsed: 1234 * 131072,
		KVAllocated: 32 * 4096 * 8 * 128 * 2 * 2, Weights: 4_368_439_296, Scratch: 301_989_888}
	met := Metrics{
		Load: 2300 * time.Millisecond, Prefill: &engine.PrefillInfo{Tokens: 812, Reused: 400, Duration: 950 * time.Millisecond},
		TTFT: 1010 * time.Millisecond, Last: 31 * time.Millisecond, Avg: 30.4,
		Speeds: []float64{28, 29, 31, 33, 30, 12, 30, 32, 31, 30}, Generated: 57, ContextUsed: 1234, ContextSize: 4096,
		Latencies: latencies(),
	}
	text := map[int32]string{10: " Paris", 11: " the", 12: " a", 13: "\n\n", 14: " Lyon", 15: "\xe2\x80"}
	pr := Probs{Title: "step 7", Chosen: 10, HasChosen: true, Entropy: 0.87, Text: func(id int32) string { return text[id] },
		Candidates: []sample.Candidate{
			{ID: 10, Logit: 18.2, Prob: 0.81, Final: 0.93},
			{ID: 11, Logit: 16.1, Prob: 0.09, Final: 0.05},
			{ID: 12, Logit: 15.0, Prob: 0.03, Final: 0.02},
			{ID: 13, Logit: 14.2, Prob: 0.014, Cut: true, CutBy: sample.StageMinP},
			{ID: 14, Logit: 13.9, Prob: 0.010, Cut: true, CutBy: sample.StageTopP},
			{ID: 15, Logit: 11.0, Prob: 0.0006, Cut: true},
		}}
	return met, Memory{Info: info, Stats: stats}, pr
}

// TestPanelGoldens pins each panel at a narrow and a wide side column;
// regenerate with go test ./ui/... -update.
func TestPanelGoldens(t *testing.T) {
	st := asciiStyles()
	met, mem, pr := goldenData()
	for _, w := range []int{40, 60} {
		inner := InnerWidth(w)
		var b strings.Builder
		for _, box := range [][]string{
			Box(st, "Sampler", SamplerLines(st, sample.Defaults(), SetTemperature, inner), w),
			Box(st, "Next token", ProbsLines(st, pr, inner, 20), w),
			Box(st, "Speed", MetricsLines(st, met, inner), w),
			Box(st, "Memory", MemoryLines(st, mem, inner), w),
		} {
			b.WriteString(strings.Join(box, "\n") + "\n")
		}
		b.WriteString(strings.Join(StatusLines(st, Status{Params: sample.Defaults(), Metrics: met, Memory: mem, Probs: pr}, 80, 3), "\n") + "\n")
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(b.String())) })
	}
}
