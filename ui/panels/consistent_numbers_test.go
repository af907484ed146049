package panels

import (
	"regexp"
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// TestRouterWeightsReadAlike: every routing weight has two places, so a
// row does not mix "1" with ".00" (issue 45, item 22: "#4 1 #1 .00"); a
// chosen expert's weight too small to show says so.
func TestRouterWeightsReadAlike(t *testing.T) {
	st := asciiStyles()
	r := Router{Title: "step 1", Experts: 8, Layers: []engine.Routing{
		{Experts: []int32{4, 1}, Weights: []float32{0.999, 0.001}},
		{Experts: []int32{2, 5}, Weights: []float32{0.62, 0.38}},
		{Experts: []int32{3, 0}, Weights: []float32{1, 0}},
	}}
	text := strings.Join(RouterLines(st, r, 60, 8), "\n")
	for _, want := range []string{"#4 1.00 #1 <.01", "#2 .62 #5 .38", "#3 1.00 #0 .00"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if regexp.MustCompile(`#\d+ 1( |$)`).MatchString(text) {
		t.Errorf("a weight of 1 written without its places:\n%s", text)
	}
}

// TestMemoryBytesGrouped: every byte count in the memory panel, the
// engine's formulas included, has its thousands grouped, as the size rows
// do (issue 45, item 22: "103070560 B" beside "103,463,776 B").
func TestMemoryBytesGrouped(t *testing.T) {
	st := asciiStyles()
	bare := regexp.MustCompile(`\d{4,} B\b`)
	for name, mem := range map[string]Memory{"moe": moeMemory(), "hybrid": hybridMemory(), "gemma4": gemma4Memory()} {
		for _, w := range []int{36, 56, 120} {
			text := strings.Join(MemoryLines(st, mem, w), "\n")
			if b := bare.FindString(text); b != "" {
				t.Errorf("%s width %d: %q is not grouped:\n%s", name, w, b, text)
			}
		}
	}
	// an odd count the engine might write keeps its words
	if got := strings.Join(formulaTerms("1 layer × 99999999999999999999 B = 12 B"), " "); !strings.Contains(got, "99999999999999999999 B") {
		t.Errorf("an unparsable count was changed: %q", got)
	}
}
