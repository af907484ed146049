package transcript

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"vkchat/ui/conversation"
	"vkchat/ui/internal/uitest"
	"vkchat/ui/termtext"
)

func TestMarkdownBlocks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"paragraphs", "a\nb\n\n\nc", []string{"a\nb", "c"}},
		{"trailing blank lines", "a\n\n", []string{"a"}},
		{"fence keeps its blank lines", "```\nx\n\ny\n```\n\nz", []string{"```\nx\n\ny\n```", "z"}},
		{"open fence runs to the end", "p\n\n~~~py\nx\n\n", []string{"p", "~~~py\nx\n\n"}},
		{"longer closing fence", "````\n```\n\n````\n\nq", []string{"````\n```\n\n````", "q"}},
		{"info string is not a close", "```\n```go\n\nx", []string{"```\n```go\n\nx"}},
		{"indented line continues a list item", "- a\n\n  more\n\nb", []string{"- a\n\n  more", "b"}},
		{"four-space indent is no fence", "    ```\n\nx", []string{"    ```", "x"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownBlocks(tt.in); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("markdownBlocks(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func renderReply(t *testing.T, m *Transcript, text string, width int) []string {
	t.Helper()
	tr := &conversation.Turn{Role: "assistant", Content: text}
	rows, ok := m.markdownRows(tr, width)
	if !ok {
		t.Fatalf("no markdown at width %d", width)
	}
	return rows
}

func TestMarkdownRendersBlocks(t *testing.T) {
	m := newTestTranscript(t)
	rows := renderReply(t, m, uitest.MarkdownReply, 60)
	text := strings.Join(rows, "\n")
	for _, want := range []string{"## Counting lines", "• read the file with os.ReadFile", "• count the newlines",
		"│", "─", "func count(b []byte) int {", `return bytes.Count(b, []byte("\n"))`, "That is all."} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered reply lacks %q:\n%s", want, text)
		}
	}
	for _, raw := range []string{"**", "```", "|------|", "\t", "\x1b"} {
		if strings.Contains(text, raw) {
			t.Errorf("rendered reply still shows %q:\n%s", raw, text)
		}
	}
	for i, r := range rows {
		if w := termtext.Width(r); w > 60 {
			t.Errorf("row %d is %d cells wide: %q", i, w, r)
		}
	}
}

func TestMarkdownHighlightsCodeInColour(t *testing.T) {
	m := colourTranscript(t)
	rows := renderReply(t, m, "```go\nfunc main() {}\n```", 40)
	if len(rows) == 0 || !strings.Contains(rows[0], "\x1b[") || !strings.Contains(termtext.Sanitize(rows[0]), "func main() {}") {
		t.Fatalf("code row not highlighted: %q", rows)
	}
	// A keyword and a name are drawn in different colours.
	if strings.Count(rows[0], "\x1b[") < 2 {
		t.Errorf("one style for the whole row: %q", rows[0])
	}
}

// NO_COLOR on a colour terminal: the replies carry no escape sequence,
// like the rest of the screen; without it the code is highlighted.
func TestMarkdownRespectsNoColor(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "truecolor")
	for _, noColor := range []string{"", "1"} {
		t.Setenv("NO_COLOR", noColor)
		r := lipgloss.NewRenderer(io.Discard, termenv.WithTTY(true))
		m := newTranscript(r)
		text := strings.Join(renderReply(t, m, uitest.MarkdownReply, 60), "\n")
		if got := strings.Contains(text, "\x1b["); got != (noColor == "") {
			t.Errorf("NO_COLOR=%q: escape sequences %v", noColor, got)
		}
		if !strings.Contains(ansi.Strip(text), "• count the newlines") {
			t.Errorf("NO_COLOR=%q: no list:\n%s", noColor, text)
		}
	}
}

func TestMarkdownDropsTerminalControls(t *testing.T) {
	hostile := "# T\x1b]52;c;aGk=\x07itle\n\n- a\x1b[2Jb\n\n```\nx\x9b31m\n```"
	for _, m := range []*Transcript{newTestTranscript(t), colourTranscript(t)} {
		text := strings.Join(renderReply(t, m, hostile, 40), "\n")
		if strings.Contains(text, "]52;") || strings.Contains(text, "\x1b[2J") || strings.ContainsRune(text, '\x9b') || strings.ContainsRune(text, '\a') {
			t.Errorf("a control sequence from the reply reached the screen: %q", text)
		}
	}
}

// Streaming renders the same rows as rendering the finished prefix from
// scratch, and only the open (last) block is rendered again per token.
func TestMarkdownStreamingMatchesFreshRender(t *testing.T) {
	m := newTestTranscript(t)
	fresh := newTestTranscript(t)
	tr := &conversation.Turn{Role: "assistant"}
	for i, p := range uitest.Pieces(uitest.MarkdownReply) {
		tr.Content += p
		before := m.md.renders
		got, ok := m.markdownRows(tr, 50)
		if !ok {
			t.Fatal("no markdown")
		}
		if n := m.md.renders - before; n > 2 {
			// The token may close one block and open the next; nothing
			// older is drawn again.
			t.Fatalf("token %d (%q) rendered %d blocks", i, p, n)
		}
		want := renderReply(t, fresh, tr.Content, 50)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("after token %d (%q) the cached rows differ from a fresh render:\n%s\n---\n%s", i, p, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// A slow open block is drawn again only after debounceFactor times its
// cost; finished blocks and the finished reply are drawn at once.
func TestMarkdownDebouncesASlowOpenBlock(t *testing.T) {
	m := newTestTranscript(t)
	now := time.Unix(0, 0)
	m.SetClock(func() time.Time { now = now.Add(10 * time.Millisecond); return now }) // each render "costs" 10 ms
	tr := &conversation.Turn{Role: "assistant", Streaming: true}
	var shown []string
	for _, p := range []string{"one", " two", " three", " four", " five", " six"} {
		tr.Content += p
		rows, _ := m.markdownRows(tr, 40)
		shown = append(shown, strings.Join(rows, "/"))
	}
	want := []string{"one", "one", "one", "one", "one two three four five", "one two three four five"}
	if fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Fatalf("drawn %q, want %q", shown, want)
	}
	tr.Streaming = false
	if rows, _ := m.markdownRows(tr, 40); strings.Join(rows, "/") != "one two three four five six" {
		t.Errorf("the finished reply shows %q", rows)
	}
	// Under minDebounce a block is drawn for every token.
	m.SetClock(func() time.Time { now = now.Add(time.Millisecond); return now })
	tr = &conversation.Turn{Role: "assistant", Streaming: true, Content: "a"}
	m.markdownRows(tr, 40)
	tr.Content += " b"
	if rows, _ := m.markdownRows(tr, 40); strings.Join(rows, "/") != "a b" {
		t.Errorf("a fast block was held back: %q", rows)
	}
}

// When the open block is held back, a redraw is scheduled for when the
// hold ends, so the tokens before a pause in the stream still show.
func TestMarkdownHeldBlockIsRedrawn(t *testing.T) {
	m := newTestTranscript(t)
	m.SetSize(59, 25) // the transcript's part of a 100x30 screen
	now := time.Unix(0, 0)
	step := 10 * time.Millisecond
	m.SetClock(func() time.Time { now = now.Add(step); return now })
	reply := &conversation.Turn{Role: "assistant", Streaming: true, Content: "one"}
	m.conv.Append([]*conversation.Turn{{Role: "user", Content: "hi"}, reply}...)
	m.SetReply(reply, 7)

	if cmd := m.ScheduleRedraw(); cmd != nil {
		t.Fatal("a redraw was scheduled for a block that is up to date")
	}
	reply.Content += " two"
	cmd := m.ScheduleRedraw()
	if cmd == nil || !m.redrawPending || strings.Contains(strings.Join(m.cacheOf(reply).render.lines, "\n"), "two") {
		t.Fatalf("held block: cmd %v, pending %v, rows %q", cmd != nil, m.redrawPending, m.cacheOf(reply).render.lines)
	}
	if m.ScheduleRedraw() != nil {
		t.Error("a second redraw was scheduled while one is pending")
	}
	now = now.Add(time.Second) // the hold is over; no token comes
	if cmd := m.Update(RedrawMsg{gen: 7}); cmd != nil {
		t.Error("still held after the redraw")
	}
	// The redraw rendered the turn again although its text did not change.
	if got := strings.Join(m.cacheOf(reply).render.lines, "\n"); !strings.Contains(got, "one two") {
		t.Errorf("after the redraw the reply shows %q", got)
	}
}

func TestMarkdownNarrowFallsBackToPlain(t *testing.T) {
	m := newTestTranscript(t)
	if _, ok := m.markdownRows(&conversation.Turn{Role: "assistant", Content: "# x"}, minMarkdownWidth-1); ok {
		t.Error("markdown drawn below its minimum width")
	}
	long := uitest.MarkdownReply + "\n\nSee https://example.com/a/very/long/path/that/goes/on/and/on/forever and `averylongidentifierwithoutanybreakatall`.\n\n```\nx := f(\"a very long line of code that does not fit at all\", y)\n```"
	for w := minMarkdownWidth; w < 90; w += 7 {
		rows := renderReply(t, m, long, w)
		for _, r := range rows {
			if termtext.Width(r) > w {
				t.Errorf("width %d: row %q overflows", w, r)
			}
		}
		// Nothing is lost: every character of the long words is drawn.
		flat := strings.ReplaceAll(strings.ReplaceAll(strings.Join(rows, ""), " ", ""), "│", "")
		for _, word := range []string{"https://example.com/a/very/long/path/that/goes/on/and/on/forever", "averylongidentifierwithoutanybreakatall"} {
			if !strings.Contains(flat, word) {
				t.Errorf("width %d: %q is not all on screen", w, word)
			}
		}
	}
}

// FuzzMarkdownRows: any reply text renders without a panic or a control
// character (Ascii profile), and rendering it after one of its prefixes
// (as streaming does, through the block cache) gives the rows a fresh
// render gives.
func FuzzMarkdownRows(f *testing.F) {
	for _, s := range []string{uitest.MarkdownReply, "```", "- a\n\n  b\n\n|x|\n|-|\n|1|", "# \x1b]52;c;aGk=\x07t\n\n~~~\n\t\n~~~", "> q\n>\n> > r", "1. a\n   ```go\n   x\n   ```"} {
		f.Add(s, uint16(len(s)/2))
	}
	m := newTranscript(testRenderer())
	m.SetClock(nil)
	fresh := newTranscript(testRenderer())
	fresh.SetClock(nil)
	f.Fuzz(func(t *testing.T, text string, cut uint16) {
		if len(text) > 4096 {
			return
		}
		tr := &conversation.Turn{Role: "assistant", Streaming: true, Content: text[:int(cut)%(len(text)+1)]}
		m.markdownRows(tr, 40)
		tr.Content = text
		got, ok := m.markdownRows(tr, 40)
		want, _ := fresh.markdownRows(&conversation.Turn{Role: "assistant", Content: text}, 40)
		if !ok || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("cached rows differ from a fresh render (ok %v):\n%q\n%q", ok, got, want)
		}
		for _, r := range got {
			for _, c := range r {
				if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
					t.Fatalf("control %U in row %q", c, r)
				}
			}
		}
	})
}

// TestMarkdownKeepsLineBreaks: a reply's single line breaks stay breaks
// (Markdown alone would join them into one paragraph), while the Markdown
// around them still renders.
func TestMarkdownKeepsLineBreaks(t *testing.T) {
	m := newTestTranscript(t)
	rows := renderReply(t, m, "Red roses,\nBlue sugar;\nSweet two.\n\n**bold** and `code`\n\n- one\n- two", 60)
	var trimmed []string
	for _, r := range rows {
		trimmed = append(trimmed, strings.TrimSpace(ansi.Strip(r)))
	}
	text := strings.Join(trimmed, "\n")
	if !strings.Contains(text, "Red roses,\nBlue sugar;\nSweet two.") {
		t.Errorf("line breaks lost:\n%s", text)
	}
	if strings.Contains(text, "**") || !strings.Contains(text, "bold and code") || !strings.Contains(text, "• one\n• two") {
		t.Errorf("Markdown no longer rendered:\n%s", text)
	}
}
