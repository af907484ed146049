package panels

import (
	"vkchat/runtime/sample"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Side is what the side column of a wide window shows.
type Side struct {
	Metrics Metrics
	Memory  Memory
	Params  sample.Params // the sampler panel's settings
	Changed string        // the setting changed last
	Probs   Probs
	// Router is the MoE router panel; nil for a dense model.
	Router *Router
	// The funnel of the step the probability panel shows, and the
	// setting it highlights.
	Funnel        sample.Funnel
	FunnelParams  sample.Params
	FunnelChanged string
	// HidePanels: f2 left only the core panels (speed, memory, next token).
	HidePanels bool
}

// SideColumn stacks the panels in h rows of w cells. The core ones always show:
// the next-token distribution, speed and memory (as full panels when they
// fit, else as the few rows of CoreLines). The optional ones (sampler,
// the MoE router, funnel, latency) take what room is left, in that order,
// unless f2 hid them; the distribution takes the rest. The memory panel
// gives up its formulas before the router panel goes (routerMemory).
func SideColumn(st theme.Styles, d Side, w, h int) []string {
	inner := InnerWidth(w)
	metricsData, memData := d.Metrics, d.Memory
	const minProbs = 2 + 2 + 3 // borders, title, header, three candidates
	room := h
	fits := func(box []string) bool {
		if room-len(box) >= minProbs {
			room -= len(box)
			return true
		}
		return false
	}
	metrics := Box(st, "Speed", MetricsLines(st, metricsData, inner), w)
	memBox := func(d MemoryDetail) []string {
		return Box(st, "Memory", MemoryLinesDetail(st, memData, inner, d), w)
	}
	coreBox := func(memory []string) []string {
		if room-len(metrics)-len(memory) >= minProbs {
			return append(append([]string(nil), metrics...), memory...)
		}
		return Box(st, "Speed · Memory", CoreLines(st, metricsData, memData, inner), w)
	}
	sampler := Box(st, "Sampler", SamplerLines(st, d.Params, d.Changed, inner), w)
	var r Router
	detail := MemoryFull
	if d.Router != nil && !d.HidePanels {
		r = *d.Router
		detail = routerMemory(r, memData.Info.Layers, func(d MemoryDetail) int {
			left := room - len(coreBox(memBox(d)))
			if left-len(sampler) >= minProbs {
				left -= len(sampler)
			}
			return left - minProbs - 2
		})
	}
	core := coreBox(memBox(detail))
	room -= len(core)

	var router, funnel, latency []string
	if !d.HidePanels {
		if !fits(sampler) {
			sampler = nil
		}
		if d.Router != nil {
			if rows := room - minProbs - 2; rows >= 2 {
				router = Box(st, "Router · "+RouterTitle(r), RouterLines(st, r, inner, rows), w)
				room -= len(router)
			}
		}
		fv, fp, changed := d.Funnel, d.FunnelParams, d.FunnelChanged
		if box := Box(st, "Sampler funnel", FunnelLines(st, fv, fp, changed, inner), w); fits(box) {
			funnel = box
		}
		if box := Box(st, "Latency", LatencyLines(st, metricsData.Latencies, inner), w); fits(box) {
			latency = box
		}
	} else {
		sampler = nil
	}
	pd := d.Probs
	probRows := max(min(room-2, len(pd.Candidates)+2), 2)
	probs := Box(st, "Next token", ProbsLines(st, pd, inner, probRows), w)

	var out []string
	for _, box := range [][]string{sampler, probs, router, funnel, latency, core} {
		out = append(out, box...)
	}
	return termtext.FitLines(out, w, h)
}

// routerMemory is how much of the memory panel to show beside the router
// panel: the most detail with which the router still shows every layer
// (up to eight), else the most with which it shows at least two rows,
// else all of it (the router does not fit either way). rowsWith is the
// router's body rows with the memory panel at a detail.
func routerMemory(r Router, modelLayers int, rowsWith func(MemoryDetail) int) MemoryDetail {
	layers := len(r.Layers)
	if layers == 0 {
		// before the first token: the rows its routing will take, so
		// the panels do not move when it comes
		layers = modelLayers
	}
	want := min(max(layers, 2), 8)
	details := []MemoryDetail{MemoryFull, MemoryKV, MemoryRows}
	for _, need := range []int{want, 2} {
		for _, d := range details {
			if rowsWith(d) >= need {
				return d
			}
		}
	}
	return MemoryFull
}
