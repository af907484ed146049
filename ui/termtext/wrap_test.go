package termtext

import (
	"strings"
	"testing"
)

func rowsText(rows [][]Glyph) []string {
	var out []string
	for _, r := range rows {
		var b strings.Builder
		for _, g := range r {
			b.WriteString(g.Text)
		}
		out = append(out, b.String())
	}
	return out
}

func noTag(int) int { return 0 }

func TestWrapWords(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"hello world", 20, []string{"hello world"}},
		{"hello world", 5, []string{"hello", "world"}},
		{"hello world", 7, []string{"hello", "world"}},
		{"a bb ccc dddd", 6, []string{"a bb", "ccc", "dddd"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"ab abcdefgh", 4, []string{"ab", "abcd", "efgh"}},
		{"", 5, []string{""}},
		{"世界世界", 5, []string{"世界", "世界"}},
		{"x", 0, []string{"x"}},
	}
	for _, tt := range tests {
		got := rowsText(WrapWords(Glyphs(tt.in, noTag), tt.width))
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("WrapWords(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
		for _, r := range got {
			if Width(r) > max(tt.width, 1) && Width(r) > 2 {
				t.Errorf("row %q wider than %d", r, tt.width)
			}
		}
	}
}

func TestWrapHardKeepsIndentation(t *testing.T) {
	got := rowsText(WrapHard(Glyphs("    return x + y", noTag), 8))
	want := []string{"    retu", "rn x + y"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGlyphsExpandTabs(t *testing.T) {
	gs := Glyphs("a\tb", func(off int) int { return off })
	if got := strings.Join(rowsText([][]Glyph{gs}), ""); got != "a   b" {
		t.Errorf("got %q", got)
	}
	if gs[1].Tag != 1 || gs[3].Tag != 1 || gs[4].Tag != 2 {
		t.Errorf("tab spaces should carry the tab's offset: %+v", gs)
	}
}

func TestFit(t *testing.T) {
	if got := Fit("hello world", 5); got != "hell…" {
		t.Errorf("Fit cut = %q", got)
	}
	if got := Fit("hi", 4); got != "hi  " {
		t.Errorf("Fit pad = %q", got)
	}
	if got := Fit("x", 0); got != "" {
		t.Errorf("Fit 0 = %q", got)
	}
	if got := FitLines([]string{"a", "b", "c"}, 2, 2); len(got) != 2 || got[1] != "b " {
		t.Errorf("FitLines = %q", got)
	}
}
