package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/panels"
)

// fakeRouting is a deterministic top-k routing of token i over layers
// layers of e experts, most weight first, the weights summing to 1.
func fakeRouting(i, layers, e, k int) []engine.Routing {
	out := make([]engine.Routing, layers)
	for l := range out {
		r := engine.Routing{}
		seen := map[int32]bool{}
		x := uint32(i*7919 + l*104729 + 17)
		var sum float32
		for len(r.Experts) < k {
			x = x*1664525 + 1013904223
			id := int32(x>>8) % int32(e)
			if seen[id] {
				continue
			}
			seen[id] = true
			w := float32(k-len(r.Weights)) + float32(x%5)/10
			r.Experts, r.Weights = append(r.Experts, id), append(r.Weights, w)
			sum += w
		}
		for j := range r.Weights {
			r.Weights[j] /= sum
		}
		out[l] = r
	}
	return out
}

// newMoEFakeEngine is the fake engine as a mixture-of-experts model: 4
// layers of 8 experts, 2 per token.
func newMoEFakeEngine() *fakeEngine {
	f := newFakeEngine()
	f.info.Name, f.info.Arch, f.info.Layers = "tiny-moe", "qwen3moe", 4
	f.info.Experts, f.info.ExpertsUsed = 8, 2
	const expert, shared = 4_194_304, 301_989_888
	perToken := int64(4 * 4 * 64 * 2 * 2)
	f.stats = engine.Stats{ContextSize: 2048, KVPerToken: perToken, KVAllocated: 2048 * perToken, Scratch: 12_582_912,
		Weights: shared + 4*8*expert, WeightsActive: shared + 4*2*expert,
		ActiveFormula: fmt.Sprintf("4 layers × 2 of 8 experts × %d B + %d B of attention, norms, router and embeddings = %d B", expert, shared, shared+4*2*expert)}
	f.route = func(i int) []engine.Routing { return fakeRouting(i, 4, 8, 2) }
	return f
}

// The screens under testdata/TestGoldenMoE are regenerated with
//
//	go test ./ui -run TestGoldenMoE -update
//
// The router panel of the live token (side column; a strip over the
// status bar when narrow), of an inspected one, and the expert map.
func TestGoldenMoE(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := newMoEFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("Write a tiny Go program")
		screen(t, h, name+"_router", sz.w, sz.h)

		h.key("tab", "home", "right", "right")
		if got, want := m.insp.Probs.Experts, fakeRouting(2, 4, 8, 2); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("inspected step 3 routes %v, want %v", got, want)
		}
		screen(t, h, name+"_inspect_router", sz.w, sz.h)

		h.key("e")
		if !m.insp.Experts() {
			t.Fatal("e did not turn the expert map on")
		}
		screen(t, h, name+"_expert_map", sz.w, sz.h)
	}
}

// TestMoEEarlierReplyKeepsRouting: a token of an earlier reply, inspected
// after a newer one, shows its own routing, and the expert map counts k
// experts per layer for each token of the reply it follows.
func TestMoEEarlierReplyKeepsRouting(t *testing.T) {
	eng := newMoEFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("first")
	first := m.conv.Last()
	h.say("second")
	h.key("tab")
	for m.insp.Turn() != first {
		before := m.insp.Step()
		h.key("left")
		if m.insp.Turn() != first && m.insp.Step() == before {
			t.Fatal("the cursor does not reach the first reply")
		}
	}
	h.key("home", "right")
	if got, want := m.insp.Probs.Experts, fakeRouting(1, 4, 8, 2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the first reply's step 2 routes %v, want %v", got, want)
	}
	h.key("e")
	u := m.insp.ExpertUsage(first, m.info.Experts)
	if u.Tokens != len(first.Steps) {
		t.Errorf("expert map counts %d tokens of %d", u.Tokens, len(first.Steps))
	}
	for l, c := range u.Counts {
		sum := 0
		for _, n := range c {
			sum += n
		}
		if sum != 2*len(first.Steps) {
			t.Errorf("layer %d: %d routings, want %d", l, sum, 2*len(first.Steps))
		}
	}
	if v := m.View(); !strings.Contains(v, "experts · reply of") {
		t.Errorf("the expert map is not on screen:\n%s", v)
	}
}

// TestDenseHasNoRouter: a dense model shows no router panel at any size,
// no expert key in the inspector's footer, and e only says why.
func TestDenseHasNoRouter(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}, {100, 16}} {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("hi")
		h.key("tab", "e")
		v := m.View()
		if m.insp.Experts() || strings.Contains(v, "Router") || strings.Contains(v, "experts ·") || strings.Contains(v, "e expert map") {
			t.Errorf("%dx%d: a dense model shows routing:\n%s", sz.w, sz.h, v)
		}
		if !strings.Contains(m.status.text, "dense") {
			t.Errorf("%dx%d: e says %q", sz.w, sz.h, m.status.text)
		}
	}
}

// TestMoEScreensFit: every size keeps the screen's shape with the router
// panel and the expert map, and wherever a dense model's memory panel is
// on screen, a mixture-of-experts model's is too (it comes before the
// router panel).
func TestMoEScreensFit(t *testing.T) {
	moe := newTestModel(t, newMoEFakeEngine(), Config{})
	hm := newHarness(t, moe)
	dense := newTestModel(t, newFakeEngine(), Config{})
	hd := newHarness(t, dense)
	for _, h := range []*harness{hm, hd} {
		h.size(160, 48)
		h.say("hi")
		h.key("tab")
	}
	hm.key("e")
	for w := 20; w <= 200; w += 9 {
		for hgt := 8; hgt <= 60; hgt += 5 {
			hm.size(w, hgt)
			hd.size(w, hgt)
			v := moe.View()
			checkScreen(t, v, w, hgt)
			if strings.Contains(dense.View(), "Memory ─") && !strings.Contains(v, "Memory ─") {
				t.Errorf("%dx%d: the dense model's memory panel is on screen, the MoE model's is not:\n%s", w, hgt, v)
			}
		}
	}
	hm.key("f1")
	if v := moe.View(); !strings.Contains(v, "e expert map") {
		t.Errorf("F1 does not list the expert map key:\n%s", v)
	}
}

// TestRealMoEEngine drives the UI with the real engine on synth-qwen3moe
// (2 layers, 8 experts, top-2): the router panel shows each layer's two
// experts and the memory panel what one token reads.
func TestRealMoEEngine(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), testenv.Model(t, "2026/synth-qwen3moe-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 6})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	t.Cleanup(func() { _ = tm.Quit() })
	tm.Type("Once upon a time")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "6-token limit") },
		teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	view := final.View()
	for _, want := range []string{"Router", "2 of 8 experts", "L0 ", "L1 ", "active", panels.ExactBytes(s.Stats().WeightsActive)} {
		if !strings.Contains(view, want) {
			t.Errorf("no %q on screen:\n%s", want, view)
		}
	}
	reply := final.conv.Last()
	if r := reply.Routing(len(reply.Steps) - 1); len(r) != 2 || len(r[0].Experts) != 2 {
		t.Errorf("the last token's routing %+v, want 2 layers of 2 experts", r)
	}
}
