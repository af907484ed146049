package termtext

import (
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// Corpus is text that has broken terminal layouts: scripts with spacing
// and combining marks, right-to-left text, wide characters, emoji
// sequences, tabs and control characters.
var Corpus = []string{
	"น้ำ",
	"नमस्ते दुनिया",
	"مرحبا بالعالم",
	"日本語のテキスト",
	"e\u0301 a\u0308 o\u0302\u0323",
	"I ❤️ it 👍🏽",
	"👨‍👩‍👧 family",
	"🇯🇵🇫🇷 flags",
	"tab\there",
	"bell\a esc\x1b[31mred\x1b[0m nul\x00",
}

func TestWidth(t *testing.T) {
	// want is where tmux 3.3a leaves the cursor after printing the text
	// (tmux display -p '#{cursor_x}'), except for the two emoji where it
	// draws fewer or more cells than current terminals (kitty, WezTerm,
	// foot, Ghostty), whose width is given instead.
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"น้ำ", 2}, // Thai: ำ (SARA AM) is a spacing mark, ้ combines
		{"ที่", 1}, // two combining marks on one base
		{"नमस्ते दुनिया", 10}, // Devanagari: े ि ा each take a cell
		{"कि", 2},
		{"مرحبا بالعالم", 13},
		{"日本語", 6},
		{"e\u0301", 1},
		{"👨‍👩‍👧", 2},
		{"🇯🇵", 2},
		{"❤️", 2}, // tmux 3.3a: 1
		{"👍🏽", 2}, // tmux 3.3a: 4
		{"I ❤️ it 👍🏽", 10},
		{"\x1b[31mred\x1b[0m", 3},
		{"a\tb", 2}, // a tab is a control character: Glyphs expands it
	}
	for _, tt := range tests {
		if got := Width(tt.in); got != tt.want {
			t.Errorf("Width(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestWidthNeverBelowRenderer: bubbletea's renderer measures rows with
// ansi.StringWidth and cuts what it measures past the window; Width must
// never say less, or the renderer would cut a row the layout fitted.
func TestWidthNeverBelowRenderer(t *testing.T) {
	for r := rune(0x20); r < 0x110000; r++ {
		if !unicode.IsPrint(r) && !unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) {
			continue
		}
		s := "a" + string(r) + "\u0e33"
		if w, a := Width(s), ansi.StringWidth(s); w < a {
			t.Fatalf("Width(%q) = %d < ansi.StringWidth %d", s, w, a)
		}
	}
	for _, s := range Corpus {
		if w, a := Width(s), ansi.StringWidth(s); w < a {
			t.Errorf("Width(%q) = %d < ansi.StringWidth %d", s, w, a)
		}
	}
}

func TestTruncateAndFit(t *testing.T) {
	tests := []struct {
		in   string
		w    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello world", 6, "hello…"},
		{"hello     ", 5, "hello"}, // only blanks cut: no ellipsis
		{"น้ำน้ำ", 3, "น้ำ…"},
		{"日本語", 4, "日…"},
		{"👍🏽👍🏽", 3, "👍🏽…"},
		{"\x1b[1mbold text\x1b[0m", 5, "\x1b[1mbold…\x1b[0m"},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.w)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
		if Width(got) > tt.w {
			t.Errorf("Truncate(%q, %d) is %d cells", tt.in, tt.w, Width(got))
		}
	}
	for _, s := range Corpus {
		for w := 1; w <= 30; w++ {
			if got := Width(Fit(Sanitize(s), w)); got != w {
				t.Errorf("Fit(%q, %d) is %d cells", s, w, got)
			}
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in       string
		from, to int
		want     string
	}{
		{"abcdef", 2, 4, "cd"},
		{"日本語", 1, 5, " 本 "}, // wide clusters across an edge become blanks
		{"น้ำab", 0, 2, "น้ำ"},
		{"\x1b[1mab\x1b[0mcd", 1, 3, "\x1b[1mb\x1b[0mc"},
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.from, tt.to); got != tt.want {
			t.Errorf("Cut(%q, %d, %d) = %q, want %q", tt.in, tt.from, tt.to, got, tt.want)
		}
	}
}

// terminal is a one-row terminal that draws clusters with its own width
// rule, as a real one would, with autowrap on or off.
type terminal struct {
	cells    []string
	col      int
	autowrap bool
	wrapped  bool
	width    func(cluster string) int
}

func newTerminal(w int, autowrap bool, width func(string) int) *terminal {
	return &terminal{cells: make([]string, w), autowrap: autowrap, width: width}
}

// perCodePoint draws each code point on its own, as terminals without
// grapheme clustering do (tmux 3.3a's "👍🏽" is four cells).
func perCodePoint(c string) int {
	w := 0
	for _, r := range c {
		w += ClusterWidth(string(r), ansi.StringWidth(string(r)))
	}
	return w
}

func (t *terminal) write(s string) {
	var state byte
	for s != "" {
		seq, _, n, next := ansi.DecodeSequence(s, state, nil)
		state, s = next, s[n:]
		switch {
		case seq == "\r":
			t.col = 0
		case seq == ansi.EraseLineRight:
			for i := min(t.col, len(t.cells)); i < len(t.cells); i++ {
				t.cells[i] = ""
			}
		case strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "G"):
			var c int
			for _, d := range seq[2 : len(seq)-1] {
				c = c*10 + int(d-'0')
			}
			t.col = max(c-1, 0)
		case isControl(seq):
		default:
			w := t.width(seq)
			if t.col+w > len(t.cells) {
				if t.autowrap {
					t.wrapped = true
					return
				}
				t.col = len(t.cells) - w
			}
			if t.col < 0 {
				continue
			}
			t.cells[t.col] = seq
			for i := 1; i < w; i++ {
				t.cells[t.col+i] = ""
			}
			t.col += w
		}
	}
}

// TestTerminalRow: a row of two regions lands with its second region at
// its column whether the terminal agrees with Width or draws emoji per
// code point, and the encoded row measures as the layout's row for
// bubbletea's renderer.
func TestTerminalRow(t *testing.T) {
	const w, split = 30, 16
	for _, s := range Corpus {
		left := Fit(Sanitize(s)+" "+Sanitize(s), split)
		row := left + Fit("│ "+Sanitize(s), w-split-1) + "│"
		if Width(row) != w {
			t.Fatalf("%q: row is %d cells", s, Width(row))
		}
		out := TerminalRow(row, []int{split})
		if got := ansi.StringWidth(out); got != w {
			t.Errorf("%q: the renderer measures %d cells, want %d", s, got, w)
		}
		for _, model := range []struct {
			name  string
			width func(string) int
		}{{"grapheme", func(c string) int { return Width(c) }}, {"per-code-point", perCodePoint}} {
			term := newTerminal(w, false, model.width)
			term.write(out)
			if term.cells[split] != "│" {
				t.Errorf("%q, %s terminal: cell %d is %q, want the border; row %q", s, model.name, split, term.cells[split], term.cells)
			}
			if model.name == "grapheme" && term.cells[w-1] != "│" {
				t.Errorf("%q: the last cell is %q, want the border", s, term.cells[w-1])
			}
		}
	}
}

// BenchmarkWidth measures Width against ansi.StringWidth (what it replaced)
// on a styled ASCII row and on a row of the corpus.
func BenchmarkWidth(b *testing.B) {
	rows := map[string]string{
		"ascii":  "\x1b[1m  Here is a tiny Go program that prints a greeting:\x1b[0m" + strings.Repeat(" ", 40),
		"corpus": strings.Join(Corpus[:8], " "),
	}
	for name, row := range rows {
		b.Run(name+"/Width", func(b *testing.B) {
			for b.Loop() {
				Width(row)
			}
		})
		b.Run(name+"/ansi.StringWidth", func(b *testing.B) {
			for b.Loop() {
				ansi.StringWidth(row)
			}
		})
	}
}
