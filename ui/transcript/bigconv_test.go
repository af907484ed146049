package transcript

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// proseText is about n bytes of lines of words, a blank line between
// paragraphs, as a long pasted text or a loaded file's message.
func proseText(n int, seed uint64) string {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while vkchat draws *text* and `code` in rows")
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for line := 0; b.Len() < n; line++ {
		for w := range 14 {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteByte('\n')
		if line%6 == 5 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// manyTurns is a transcript 120×40 of n short messages.
func manyTurns(t testing.TB, n int) *Transcript {
	tr := newTranscript(testRenderer())
	tr.SetSize(120, 40)
	tr.SetModel("model", false)
	turns := make([]*conversation.Turn, n)
	for i := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		turns[i] = &conversation.Turn{Role: role, Content: fmt.Sprintf("message %d", i)}
	}
	tr.conv.Append(turns...)
	return tr
}

// A draw lays out the turns in view, not the whole conversation: with
// 100,000 turns, the first frame and a scroll far up each render a
// screenful of turns.
func TestDrawRendersOnlyTurnsInView(t *testing.T) {
	tr := manyTurns(t, 100_000)
	v := checkView(t, tr, 120, 40)
	if !strings.Contains(v, "message 99999") {
		t.Fatalf("the last message is not in view:\n%s", v)
	}
	if n := len(tr.renders); n > 40 {
		t.Errorf("the first frame rendered %d turns for a view of 40 rows", n)
	}
	tr.ScrollBy(-3000)
	v = checkView(t, tr, 120, 40)
	// Each short turn takes 3 rows: 3,000 rows up is 1,000 turns back.
	if !strings.Contains(v, "message 98990") || tr.Following() {
		t.Fatalf("3,000 rows up, following %v:\n%s", tr.Following(), v)
	}
	if n := len(tr.renders); n > 1100 {
		t.Errorf("scrolling 1,000 turns up rendered %d turns", n)
	}
	tr.ScrollBy(+3000)
	if v := checkView(t, tr, 120, 40); !tr.Following() || !strings.Contains(v, "message 99999") {
		t.Errorf("back at the end: following %v:\n%s", tr.Following(), v)
	}
}

// The window shows the same rows as the whole transcript (Lines) cut at
// the same offset, wherever it is scrolled.
func TestWindowMatchesLines(t *testing.T) {
	tr := manyTurns(t, 40)
	tr.conv.SetSystem("be brief")
	tr.SetSize(30, 7)
	all, _ := tr.Lines()
	for _, step := range []int{-1, -5, -7, -13, -200, 3, 11, 50, 1000} {
		tr.ScrollBy(step)
		v := strings.Split(checkView(t, tr, 30, 7), "\n")
		off := tr.YOffset()
		want := all[off:min(off+7, len(all))]
		for i, w := range want {
			if strings.TrimRight(v[i], " ") != strings.TrimRight(w, " ") {
				t.Fatalf("after scrolling %d, offset %d: row %d is %q, Lines has %q", step, off, i, v[i], w)
			}
		}
		if got, want := tr.AtBottom(), off+7 >= len(all); got != want {
			t.Errorf("after scrolling %d: at bottom %v, want %v", step, got, want)
		}
	}
}

// A line longer than a piece is wrapped piece by piece into the same rows
// as all at once: prose, code, runs of spaces, words longer than a row,
// wide characters and generated tokens (whose glyphs carry their steps).
func TestLongLineWrapsAsOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pick := []string{"word", "  ", " ", "a", "supercalifragilisticexpialidocious-and-longer-than-a-row", "日本語", "é", "x"}
	var b strings.Builder
	for b.Len() < 3000 {
		b.WriteString(pick[rng.IntN(len(pick))])
		if rng.IntN(3) == 0 {
			b.WriteByte(' ')
		}
	}
	line := b.String()
	texts := map[string]string{
		"prose": line + "\n" + line,
		"code":  "```\n" + line + "\n```\n" + line,
	}
	for name, text := range texts {
		for _, generated := range []bool{false, true} {
			turn := &conversation.Turn{Role: "assistant", Content: text}
			if generated {
				turn = &conversation.Turn{Role: "assistant"}
				for i := 0; i < len(text); i += 5 {
					turn.AppendToken(engine.TokenInfo{ID: int32(i), Piece: text[i:min(i+5, len(text))]})
				}
			}
			body := bodyRender{st: newTestTranscript(t).styles, width: 37, sel: turn, step: len(turn.Steps) - 1}
			whole, wholeSel := body.render([]segment{{t: turn, base: classAssistant}})
			old := maxPiece
			for _, piece := range []int{1, 7, 64, 500} {
				maxPiece = piece
				rows, sel := body.render([]segment{{t: turn, base: classAssistant}})
				if !slices.Equal(rows, whole) || sel != wholeSel {
					t.Errorf("%s (generated %v), pieces of %d bytes: %d rows (selected %d), want %d (%d)", name, generated, piece, len(rows), sel, len(whole), wholeSel)
					for i := range min(len(rows), len(whole)) {
						if rows[i] != whole[i] {
							t.Errorf("first difference at row %d: %q, want %q", i, rows[i], whole[i])
							break
						}
					}
				}
			}
			maxPiece = old
		}
	}
}

// peakHeap runs f and returns about the most heap it had in use above what
// was in use before, sampled every millisecond with the collector made
// eager (GOGC=10), so the figure follows live data rather than garbage.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	return max(peak.Load(), base) - base
}

// Drawing a message of 2 MB, as prose and as one line, holds a small
// multiple of its size: the rows it makes and a piece of a line's glyphs
// at a time (about 3.5 times the text). Maps of an int per byte held over 32
// times the text (a 60 MB message needed gigabytes), and glamour more; a
// reply this long is drawn as plain text, with a note.
func TestBigMessageMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 6 MB of text")
	}
	const size = 2 << 20
	for _, tc := range []struct {
		name, role, text string
	}{
		{"prose", "user", proseText(size, 1)},
		{"one line", "user", strings.Repeat("word ", size/5)},
		{"reply", "assistant", proseText(size, 2)},
	} {
		tr := newTestTranscript(t)
		tr.SetSize(120, 40)
		tr.SetModel("model", false)
		tr.conv.Append(&conversation.Turn{Role: tc.role, Content: tc.text})
		var v string
		peak := peakHeap(func() { v = tr.View() })
		t.Logf("%s: %.1f MB of text, peak heap %.1f MB above the text", tc.name, float64(len(tc.text))/(1<<20), float64(peak)/(1<<20))
		if limit := uint64(10 * len(tc.text)); peak > limit {
			t.Errorf("%s: drawing %d bytes held %d bytes at peak, over %d", tc.name, len(tc.text), peak, limit)
		}
		if !strings.Contains(v, "word") && !strings.Contains(v, "the") {
			t.Errorf("%s: the end of the text is not in view:\n%s", tc.name, v)
		}
		lines, _ := tr.Lines()
		if tc.role == "assistant" && (!strings.Contains(strings.Join(lines[:3], "\n"), "not drawn as Markdown") || tr.md.renders != 0) {
			t.Errorf("%s: drawn as Markdown (%d blocks) or without the note", tc.name, tr.md.renders)
		}
	}
}

// BenchmarkFirstFrame is the first draw of a loaded conversation: many
// short turns, or one long message.
//
//	go test ./ui/transcript -run '^$' -bench FirstFrame -benchmem
func BenchmarkFirstFrame(b *testing.B) {
	b.Run("turns-100k", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			tr := manyTurns(b, 100_000)
			b.StartTimer()
			tr.View()
		}
	})
	for _, size := range []int{1 << 20, 8 << 20} {
		text := proseText(size, 1)
		b.Run(fmt.Sprintf("message-%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				b.StopTimer()
				tr := newTranscript(testRenderer())
				tr.SetSize(120, 40)
				tr.conv.Append(&conversation.Turn{Role: "user", Content: text})
				b.StartTimer()
				tr.View()
			}
		})
	}
}
