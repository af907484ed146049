package panels

import (
	"strings"
	"testing"

	"vkchat/runtime/sample"
)

// TestProbsLookAlikes: two candidates that show the same text (a byte
// token and a word token, both "I") carry their token IDs in the panel and
// in the narrow status bar, even when a long text has to be cut for the ID;
// a candidate like no other shows its text alone.
func TestProbsLookAlikes(t *testing.T) {
	st := asciiStyles()
	long := " internationalization"
	text := map[int32]string{73: "I", 306: "I", 278: " the", 900: long, 901: long}
	p := Probs{
		Title: "step 1",
		Candidates: []sample.Candidate{
			{ID: 306, Logit: 3, Prob: 0.4, Final: 0.4},
			{ID: 73, Logit: 2, Prob: 0.2, Final: 0.2},
			{ID: 278, Logit: 1, Prob: 0.1, Final: 0.1},
			{ID: 900, Logit: 0.5, Prob: 0.05, Final: 0.05},
			{ID: 901, Logit: 0.4, Prob: 0.04, Final: 0.04},
		},
		Chosen: 306, HasChosen: true, Entropy: 1,
		Text: func(id int32) string { return text[id] },
	}
	rows := ProbsLines(st, p, 56, 10)[2:]
	if len(rows) != 5 {
		t.Fatalf("%d rows:\n%s", len(rows), strings.Join(rows, "\n"))
	}
	for i, want := range []string{"I #306", "I #73", "␣the ", "#900", "#901"} {
		if !strings.Contains(rows[i], want) {
			t.Errorf("row %d %q lacks %q", i, rows[i], want)
		}
	}
	if strings.Contains(rows[2], "#") {
		t.Errorf("a candidate like no other carries an ID: %q", rows[2])
	}
	bar := StatusLines(st, Status{Probs: p}, 200, 3)
	line := bar[len(bar)-1]
	if !strings.Contains(line, "I #306") || !strings.Contains(line, "I #73") {
		t.Errorf("status bar cannot tell the two I apart: %q", line)
	}
}
