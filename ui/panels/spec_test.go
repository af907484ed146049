package panels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// TestSpecPanelGolden pins the speed panel of a speculative reply (the
// drafts accepted and the tokens per verification) at a narrow and a wide
// side column; regenerate with go test ./ui/panels -run TestSpecPanelGolden -update.
func TestSpecPanelGolden(t *testing.T) {
	st := asciiStyles()
	met, _, _ := goldenData()
	met.Spec = &engine.SpecMark{Source: "ngram", Fate: engine.FateAccepted,
		Totals: engine.SpecStats{Rounds: 21, Drafted: 60, Accepted: 36, Tokens: 57}}
	for _, w := range []int{40, 60} {
		box := Box(st, "Speed", MetricsLines(st, met, InnerWidth(w)), w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}

// TestSpecRows: the rows say what the totals say, and a reply without
// speculation has none.
func TestSpecRows(t *testing.T) {
	st := asciiStyles()
	if rows := SpecRows(st, nil); rows != nil {
		t.Errorf("no speculation: %q", rows)
	}
	rows := SpecRows(st, &engine.SpecMark{Source: "draft", Totals: engine.SpecStats{Rounds: 4, Drafted: 10, Accepted: 5, Tokens: 9}})
	if len(rows) != 2 || !strings.Contains(rows[0], "draft · 50% of 10 kept") || !strings.Contains(rows[1], "2.25 tok (4 rounds)") {
		t.Errorf("rows %q", rows)
	}
}

// TestDraftProbsGolden pins the next-token panel of drafted steps: a
// corrected draft model's draft (its distribution in a column beside the
// target's, the rejected draft marked), an accepted n-gram draft (no
// distribution of its own) and a bonus token; regenerate with
// go test ./ui/panels -run TestDraftProbsGolden -update.
func TestDraftProbsGolden(t *testing.T) {
	st := asciiStyles()
	_, _, pr := goldenData()
	corrected := pr
	corrected.Title = "step 7 · corrected"
	corrected.Draft = &Draft{Source: "draft", Fate: "corrected", Token: 11,
		Candidates: []sample.Candidate{{ID: 11, Prob: 0.55}, {ID: 10, Prob: 0.30}, {ID: 14, Prob: 0.05}}}
	accepted := pr
	accepted.Title = "step 8 · accepted"
	accepted.Draft = &Draft{Source: "ngram", Fate: "accepted", Token: 10}
	bonus := pr
	bonus.Title = "step 9 · bonus"
	bonus.Draft = &Draft{Source: "ngram", Fate: "bonus"}
	for _, w := range []int{40, 60} {
		var b strings.Builder
		for _, p := range []Probs{corrected, accepted, bonus} {
			b.WriteString(strings.Join(Box(st, "Next token", ProbsLines(st, p, InnerWidth(w), 20), w), "\n") + "\n")
		}
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(b.String())) })
	}
}
