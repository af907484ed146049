package inspector

import (
	"reflect"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// moeReply is a reply of n tokens routed over 2 layers of 4 experts: token
// i to experts i%4 and (i+1)%4 in both layers.
func moeReply(n int) *conversation.Turn {
	r := &conversation.Turn{Role: "assistant"}
	for i := range n {
		route := engine.Routing{Experts: []int32{int32(i % 4), int32((i + 1) % 4)}, Weights: []float32{0.6, 0.4}}
		r.AppendToken(engine.TokenInfo{ID: int32(i + 1), Piece: "t", Index: i,
			Candidates: []sample.Candidate{{ID: int32(i + 1), Prob: 0.7}}, Experts: []engine.Routing{route, route}})
	}
	return r
}

// TestRouterPanelFollowsTheStep: the router panel shows the routing of the
// step the probability panel shows, a preview keeps it (the same forward
// pass), and the expert map counts a reply's tokens.
func TestRouterPanelFollowsTheStep(t *testing.T) {
	in := New()
	if r := in.RouterPanel(4); r.Layers != nil || !strings.Contains(r.Empty, "no token") {
		t.Errorf("before any token: %+v", r)
	}
	reply := moeReply(6)
	in.Show(reply, 2, true)
	r := in.RouterPanel(4)
	if len(r.Layers) != 2 || r.Layers[0].Experts[0] != 2 || r.Experts != 4 || !strings.Contains(r.Title, "step 3") {
		t.Errorf("step 3: %+v", r)
	}
	in.ShowPreview(sample.Result{Candidates: []sample.Candidate{{ID: 1}}}, sample.Defaults())
	if r := in.RouterPanel(4); len(r.Layers) != 2 || r.Layers[0].Experts[0] != 2 {
		t.Errorf("the preview lost the routing: %+v", r)
	}

	if in.Experts() || !strings.Contains(in.ToggleExperts(false), "dense") || in.Experts() {
		t.Error("a dense model turned the expert map on")
	}
	if in.ToggleExperts(true); !in.Experts() {
		t.Error("e did not turn the map on")
	}
	u := in.ExpertUsage(reply, 4)
	if u.Tokens != 6 || len(u.Counts) != 2 {
		t.Fatalf("usage %+v", u)
	}
	// Experts 0..3 as first choice at tokens 0,4 / 1,5 / 2 / 3, and as
	// second at 3 / 0,4 / 1,5 / 2.
	if want := []int{3, 4, 3, 2}; !reflect.DeepEqual(u.Counts[1], want) {
		t.Errorf("layer 1 counts %v, want %v", u.Counts[1], want)
	}
	if in.ToggleExperts(true); in.Experts() {
		t.Error("e did not turn the map off")
	}
	if u := in.ExpertUsage(nil, 4); u.Tokens != 0 || u.Empty == "" {
		t.Errorf("no reply: %+v", u)
	}
}
