package ui

import (
	"fmt"
	"strings"
	"testing"
)

// TestInspectorTellsLookAlikesApart: in the inspector two candidates that
// show the same text carry their token IDs, in the panel and in the fork
// cursor's hint, so Enter forks with the one meant.
func TestInspectorTellsLookAlikesApart(t *testing.T) {
	eng := newFakeEngine()
	// "," now reads like " the": two tokens, one look (as a byte token and
	// a word token can both be "I").
	comma, the := eng.ids[","], eng.ids[" the"]
	eng.vocab[comma] = " the"
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("Write a tiny Go program")
	h.key("tab", "home", "right", "right")
	cands := mustStepInfo(t, m.conv.Last(), 2).Candidates
	for i := 0; i < len(cands) && cands[m.insp.Cand()].ID != comma; i++ {
		h.key("down")
	}
	if cands[m.insp.Cand()].ID != comma {
		t.Fatal("the cursor never reached the look-alike")
	}
	if want := fmt.Sprintf("token #%d", comma); !strings.Contains(m.status.text, want) {
		t.Errorf("cursor hint %q lacks %q", m.status.text, want)
	}
	v := m.View()
	for _, id := range []int32{comma, the} {
		if want := fmt.Sprintf("␣the #%d", id); !strings.Contains(v, want) {
			t.Errorf("the panel lacks %q:\n%s", want, v)
		}
	}
}
