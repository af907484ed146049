package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/ui/inspector"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// lensShown reports whether the lens view shows a computed lens.
func lensShown(m *Model) bool { return strings.Contains(m.View(), "settles at layer") }

// lensSettled: no token's lens is still being computed — the settle strip
// (its line starts "settle ") shows no "~" cell. The engine having been
// asked is not enough: its answer reaches the model as a message later.
func lensSettled(m *Model) bool {
	for _, line := range strings.Split(m.View(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "settle ") && strings.Contains(line, "~") {
			return false
		}
	}
	return true
}

// The lens view's screens, regenerated with
//
//	go test ./ui -run TestGoldenLens -update
func TestGoldenLens(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := chatmlEngine{newFakeEngine()}
		m := newTestModel(t, eng, Config{SystemPrompt: "You are a concise assistant."})
		h := newHarness(t, m)
		h.size(sz.w, sz.h)
		h.say("Write a tiny Go program")
		// Three tokens computed, the inspected one in the middle.
		h.key("tab", "left", "left", "left", "l")
		h.waitFor("the lens", func() bool { return lensShown(m) })
		h.key("left")
		h.waitFor("the lens one token back", func() bool { return lensShown(m) && eng.lensCallCount() == 2 })
		h.key("left", "left")
		h.waitFor("the lens three tokens back", func() bool { return lensShown(m) && eng.lensCallCount() == 4 && lensSettled(m) })
		h.key("right", "right")
		if !lensShown(m) || eng.lensCallCount() != 4 {
			t.Fatalf("%s: moving back to a computed token asked again (%d calls) or did not show it", name, eng.lensCallCount())
		}
		screen(t, h, name+"_lens", sz.w, sz.h)
	}
}

// TestLensShowsWhatTheEngineReturned: the lens is read at the tokens before
// the inspected one (the reply's prompt, then the reply up to it), off the
// UI goroutine with a "computing" state, and the view shows the engine's
// answer: the settle layer, each layer's top-1 with its probability and the
// inspected token's rank; moving back shows a computed lens without asking
// again; a new chat drops them.
func TestLensShowsWhatTheEngineReturned(t *testing.T) {
	eng := chatmlEngine{newFakeEngine()}
	eng.lensHold = make(chan struct{})
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(200, 80)
	h.say("Write a tiny Go program")
	reply := m.conv.Last()
	h.key("tab", "left", "l")
	k := len(reply.Steps) - 2
	// Update returned while the engine holds the lens: it runs elsewhere.
	if v := m.View(); !strings.Contains(v, "computing the lens…") {
		t.Fatalf("no computing state:\n%s", v)
	}
	close(eng.lensHold)
	h.waitFor("the lens", func() bool { return lensShown(m) })

	rp, err := eng.RenderPrompt(reply.Export.Req)
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	for _, pt := range rp.Tokens {
		want = append(want, pt.ID)
	}
	for _, s := range reply.Steps[:k] {
		want = append(want, s.ID)
	}
	if got := eng.lensCalls[0]; !slices.Equal(got, want) {
		t.Fatalf("the lens was read at %v, want the prompt and the reply before step %d: %v", got, k+1, want)
	}

	// The same answer from an engine of its own, so the calls counted stay
	// the view's.
	pos, err := newFakeEngine().LensAt(t.Context(), want, inspector.LensK)
	if err != nil {
		t.Fatal(err)
	}
	v := m.View()
	n := len(pos.Layers)
	final := termtext.Visible(eng.TokenText(pos.Top1ByLayer[n-1]))
	if s := fmt.Sprintf("settles at layer %d of %d on \"%s\"", pos.SettleLayer, n, final); !strings.Contains(v, s) {
		t.Errorf("the view does not say %q:\n%s", s, v)
	}
	chosen := reply.Steps[k].ID
	rows := strings.Split(v, "\n")
	for _, ly := range pos.Layers {
		label := fmt.Sprintf("L%-2d", ly.Layer)
		var row string
		for _, r := range rows {
			if strings.HasPrefix(r, label) {
				row = r
			}
		}
		if row == "" {
			t.Errorf("layer %d has no row:\n%s", ly.Layer, v)
			continue
		}
		top := ly.Top[0]
		cell := fmt.Sprintf("\"%s\" %s", termtext.Visible(eng.TokenText(int32(top[0]))), panels.Percent(float32(top[2])))
		if !strings.Contains(row, cell) {
			t.Errorf("layer %d's row lacks its top-1 %s: %q", ly.Layer, cell, row)
		}
		rank := ">10"
		for j, c := range ly.Top {
			if int32(c[0]) == chosen {
				rank = fmt.Sprintf("#%d", j+1)
			}
		}
		if !strings.Contains(row, " "+rank+" ") {
			t.Errorf("layer %d's row lacks the inspected token's rank %s: %q", ly.Layer, rank, row)
		}
		if (ly.Layer == pos.SettleLayer) != strings.Contains(row, "◆") {
			t.Errorf("layer %d (settle %d) marked wrong: %q", ly.Layer, pos.SettleLayer, row)
		}
	}

	// Back and forth: the computed lens shows at once, nothing is asked again.
	h.key("left")
	h.waitFor("the second lens", func() bool { return lensShown(m) && eng.lensCallCount() == 2 })
	h.key("right")
	if !lensShown(m) || eng.lensCallCount() != 2 {
		t.Errorf("moving back asked again: %d calls", eng.lensCallCount())
	}
	// The strip shows a settle digit-or-shade for the two computed tokens.
	var strip string
	for _, r := range strings.Split(m.View(), "\n") {
		if strings.HasPrefix(r, "settle ") {
			strip = strings.Fields(strings.TrimPrefix(r, "settle "))[0]
		}
	}
	if got := len([]rune(strip)) - strings.Count(strip, "·"); got != 2 {
		t.Errorf("the strip shows %d computed tokens, want 2: %q", got, strip)
	}

	// l closes the view; a new chat drops what was computed.
	h.key("l")
	if strings.Contains(m.View(), "settles at layer") {
		t.Error("l did not close the lens view")
	}
	h.key("esc")
	h.key("ctrl+n")
	h.say("Write a tiny Go program")
	h.key("tab", "l")
	h.waitFor("the lens in the new chat", func() bool { return lensShown(m) && eng.lensCallCount() == 3 })
}

// TestLensWithoutABackendLens: a backend without the lens, or an engine
// that cannot render its prompt, says so in one line and never panics.
func TestLensWithoutABackendLens(t *testing.T) {
	noLens := fmt.Errorf("%w (vulkan backend; the cpu backend can)", engine.ErrNoLens)
	t.Run("no lens on the backend", func(t *testing.T) {
		eng := chatmlEngine{newFakeEngine()}
		eng.lensErr = noLens
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(80, 24)
		h.say("Hi")
		h.key("tab", "l")
		h.waitFor("the error", func() bool { return strings.Contains(m.View(), noLens.Error()[:40]) })
		if n := strings.Count(m.View(), "this backend cannot"); n != 1 {
			t.Errorf("the error shows %d times:\n%s", n, m.View())
		}
	})
	t.Run("a reply being written", func(t *testing.T) {
		eng := chatmlEngine{newFakeEngine()}
		eng.holdAfter = 6
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(80, 24)
		h.typeText("Hi")
		h.key("enter")
		h.waitFor("6 tokens", func() bool { r := m.conv.Last(); return r.Role == "assistant" && len(r.Steps) == 6 })
		h.key("tab", "left", "l")
		if !strings.Contains(m.View(), "waits for the reply being written") || eng.lensCallCount() != 0 {
			t.Errorf("the lens during a reply (%d calls):\n%s", eng.lensCallCount(), m.View())
		}
		close(eng.release)
		h.idle()
		h.key("left")
		h.waitFor("the lens once the reply ended", func() bool { return lensShown(m) })
	})
	t.Run("no prompt to read again", func(t *testing.T) {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(80, 24)
		h.say("Hi")
		h.key("tab", "l")
		if !strings.Contains(m.View(), "lens: this engine cannot render") || eng.lensCallCount() != 0 {
			t.Errorf("an engine without RenderPrompt (%d calls):\n%s", eng.lensCallCount(), m.View())
		}
	})
}

// TestLensViewFitsEverySize: the lens view keeps the screen's shape (exactly
// the window's rows, none wider) from the smallest window up.
func TestLensViewFitsEverySize(t *testing.T) {
	eng := chatmlEngine{newFakeEngine()}
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("Write a tiny Go program")
	h.key("tab", "l")
	h.waitFor("the lens", func() bool { return lensShown(m) })
	for _, w := range []int{20, 33, 60, 80, 99, 100, 140, 200} {
		for _, hgt := range []int{8, 11, 16, 24, 48} {
			h.size(w, hgt)
			checkScreen(t, m.View(), w, hgt)
		}
	}
}
