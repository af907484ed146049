package ui

import (
	"testing"
)

var resizeSizes = [][2]int{
	{0, 0}, {1, 1}, {2, 2}, {5, 3}, {19, 7}, {20, 8}, {21, 9}, {40, 10}, {80, 24}, {99, 30},
	{100, 16}, {100, 15}, {120, 24}, {160, 48}, {300, 100}, {0, 50}, {50, 0}, {0, 0}, {80, 24},
}

func TestResizeDuringStreaming(t *testing.T) {
	eng := newFakeEngine()
	eng.holdAfter = 20
	m := newTestModel(t, eng, Config{SystemPrompt: "sys"})
	h := newHarness(t, m)
	h.size(0, 0) // tmux can start a program at 0x0
	checkScreen(t, m.View(), 0, 0)
	h.typeText("a question that is long enough to wrap on the smallest screens we draw")
	h.key("enter")
	h.waitFor("20 tokens", func() bool { return len(m.conv.Last().Steps) == 20 })
	for _, s := range resizeSizes {
		h.size(s[0], s[1])
		checkScreen(t, m.View(), s[0], s[1])
	}
	// Inspecting and the help screen at every size too.
	h.key("tab", "left")
	for _, s := range resizeSizes {
		h.size(s[0], s[1])
		checkScreen(t, m.View(), s[0], s[1])
	}
	h.key("f1")
	for _, s := range resizeSizes {
		h.size(s[0], s[1])
		checkScreen(t, m.View(), s[0], s[1])
	}
	h.key("f1", "esc")
	close(eng.release)
	h.idle()
	for _, s := range resizeSizes {
		h.size(s[0], s[1])
		checkScreen(t, m.View(), s[0], s[1])
		h.key("pgup")
		checkScreen(t, m.View(), s[0], s[1])
	}
}

func TestTinyScreenSaysSo(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	m.Update(keyMsg("x"))
	for _, s := range [][2]int{{10, 3}, {19, 20}, {60, 7}} {
		m.width, m.height = s[0], s[1]
		v := m.View()
		checkScreen(t, v, s[0], s[1])
	}
	m.width, m.height = 19, 5
	if v := m.View(); v[:6] != "vkchat" {
		t.Errorf("tiny view %q", v)
	}
}

func TestLongInputGrowsAndScrolls(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(80, 24)
	for range 12 {
		h.typeText("line")
		h.key("alt+enter")
	}
	l := m.layout()
	if l.inputH != 4 {
		t.Fatalf("input height %d, want the 4-row cap at 24 rows", l.inputH)
	}
	checkScreen(t, m.View(), 80, 24)
}
