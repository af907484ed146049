package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// TestMeasureBigConversation is issue 22's measurement of big inputs, run
// by hand: it writes a conversation file, then loads it and draws the
// first frame as /load and --load do, and logs the time and the peak RSS
// of each step (VmHWM, reset before each). VKCHAT_MEASURE names the file:
// message60 (one 60 MB message of prose), reply60 (the same as a reply),
// line60 (a 60 MB message on one line), turns1m (a million short
// messages).
//
//	VKCHAT_MEASURE=message60 go test ./ui -run MeasureBig -v -count=1
func TestMeasureBigConversation(t *testing.T) {
	kind := os.Getenv("VKCHAT_MEASURE")
	if kind == "" {
		t.Skip("VKCHAT_MEASURE is not set")
	}
	path := filepath.Join(t.TempDir(), kind+".json")
	writeBigConversation(t, path, kind)
	m := newTestModel(t, newFakeEngine(), Config{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	step := func(name string, f func()) {
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			t.Logf("cannot reset the peak RSS: %v", err)
		}
		start := time.Now()
		f()
		t.Logf("%s: %.2f s, peak RSS %s", name, time.Since(start).Seconds(), peakRSS())
	}
	step("load", func() {
		if err := m.saver.Load(path, m.smp.Params); err != nil {
			t.Fatal(err)
		}
	})
	var v string
	step("first frame", func() { v = m.View() })
	step("next frame", func() { v = m.View() })
	if !strings.Contains(v, "end") {
		t.Errorf("the end of the conversation is not in view:\n%s", v)
	}
}

// writeBigConversation writes a conversation file of the kind named
// without building it in memory first.
func writeBigConversation(t *testing.T, path, kind string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	prose := func() {
		words := strings.Fields("the quick brown fox jumps over a lazy dog while vkchat draws *text* and `code`")
		for n, line := 0, 0; n < 60_000_000; line++ {
			for i := range 14 {
				if i > 0 {
					n += 1 + len(words[(line*7+i*3)%len(words)])
					w.WriteString(" ")
				}
				w.WriteString(words[(line*7+i*3)%len(words)])
			}
			w.WriteString(`\n`)
			if line%6 == 5 {
				w.WriteString(`\n`)
			}
			n += 10
		}
		w.WriteString(" end")
	}
	w.WriteString(`{"version":1,"messages":[`)
	switch kind {
	case "message60":
		w.WriteString(`{"role":"user","content":"`)
		prose()
		w.WriteString(`"}`)
	case "reply60":
		w.WriteString(`{"role":"user","content":"hi"},{"role":"assistant","content":"`)
		prose()
		w.WriteString(`"}`)
	case "line60":
		w.WriteString(`{"role":"user","content":"`)
		w.WriteString(strings.Repeat("word ", 12_000_000))
		w.WriteString(`end"}`)
	case "turns1m":
		for i := range 1_000_000 {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			if i > 0 {
				w.WriteString(",")
			}
			b, _ := json.Marshal(map[string]string{"role": role, "content": fmt.Sprintf("message %d", i)})
			w.Write(b)
		}
		w.WriteString(`,{"role":"user","content":"end"}`)
	default:
		t.Fatalf("VKCHAT_MEASURE=%s: want message60, reply60, line60 or turns1m", kind)
	}
	w.WriteString(`]}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// peakRSS is the process's peak resident memory (VmHWM), as /proc says it.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
