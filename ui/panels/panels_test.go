package panels

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

func asciiStyles() theme.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return theme.New(r)
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		in    []float64
		width int
		want  string
	}{
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7}, 8, "▁▂▃▄▅▆▇█"},
		{[]float64{10, 10, 10}, 3, "███"},
		{[]float64{1, 2, 3, 4}, 2, "▆█"}, // keeps the newest
		{[]float64{-1, 0, 4}, 3, "▁▁█"},
		{[]float64{10, 10, 10, 10, 500}, 5, "▃▃▃▃█"}, // an outlier does not flatten the rest
		{[]float64{math.NaN(), math.Inf(1), 2}, 3, "▁██"},
		{nil, 5, ""},
		{[]float64{1}, 0, ""},
	}
	for _, tt := range tests {
		if got := Sparkline(tt.in, tt.width); got != tt.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestBar(t *testing.T) {
	st := asciiStyles()
	tests := []struct {
		frac  float64
		width int
		want  string
	}{
		{0, 4, "░░░░"},
		{1, 4, "████"},
		{0.5, 4, "██░░"},
		{0.0625, 2, "▏░"},
		{2, 3, "███"},
		{-1, 3, "░░░"},
	}
	for _, tt := range tests {
		got := Bar(st, tt.frac, tt.width)
		if got != tt.want {
			t.Errorf("Bar(%v, %d) = %q, want %q", tt.frac, tt.width, got, tt.want)
		}
		if termtext.Width(got) != tt.width {
			t.Errorf("Bar(%v, %d) is %d wide", tt.frac, tt.width, termtext.Width(got))
		}
	}
}

func TestFormats(t *testing.T) {
	cases := map[string]string{
		Bytes(512):                        "512 B",
		Bytes(1536):                       "1.50 KiB",
		Bytes(46137344):                   "44.0 MiB",
		Bytes(637534208):                  "608 MiB",
		Bytes(4 << 30):                    "4.00 GiB",
		ExactBytes(46137344):              "46,137,344 B",
		ExactBytes(999):                   "999 B",
		Grouped(-1234567):                 "-1,234,567",
		Duration(170 * time.Millisecond):  "170ms",
		Duration(1500 * time.Millisecond): "1.50s",
		Duration(450 * time.Microsecond):  "0.45ms",
		Duration(75 * time.Second):        "1m15s",
		Rate(0):                           "—",
		Rate(22.2222):                     "22.2 tok/s",
		Percent(0.591):                    "59.1%",
		Percent(0.00001):                  "<0.1%",
		Count(1_100_048_384):              "1.1B",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestKVFormula(t *testing.T) {
	info := engine.ModelInfo{Layers: 22, KVHeads: 4, HeadDim: 64, KVType: "f16"}
	total, elem, ok := KVFormula(info, 2048)
	if !ok || elem != 2 || total != 22*2048*4*64*2*2 {
		t.Fatalf("KVFormula = %d, %v, %v", total, elem, ok)
	}
	info.KVType = "q8_0"
	if total, _, _ = KVFormula(info, 32); total != 22*32*4*64*2*34/32 {
		t.Errorf("q8_0 total = %d", total)
	}
	info.KVType = "weird"
	if _, _, ok = KVFormula(info, 1); ok {
		t.Error("unknown KV type accepted")
	}
}

func TestMemoryLinesFormula(t *testing.T) {
	st := asciiStyles()
	info := engine.ModelInfo{Layers: 22, KVHeads: 4, HeadDim: 64, KVType: "f16", ContextSize: 2048}
	stats := engine.Stats{ContextSize: 2048, KVAllocated: 46137344, KVUsed: 22528 * 10, KVPerToken: 22528, Weights: 1 << 30, Scratch: 1 << 20}
	text := strings.Join(MemoryLines(st, Memory{Info: info, Stats: stats}, 52), "\n")
	for _, want := range []string{"22 layers", "× 2048 ctx", "× 4 kv heads", "× 64 head dim", "× 2 (K,V)", "× 2 B f16", "= 46,137,344 B ✓", "225,280 B", "1.00 GiB"} {
		if !strings.Contains(text, want) {
			t.Errorf("memory panel lacks %q:\n%s", want, text)
		}
	}
	stats.KVAllocated++
	text = strings.Join(MemoryLines(st, Memory{Info: info, Stats: stats}, 52), "\n")
	if !strings.Contains(text, "≠ allocated") {
		t.Errorf("a mismatch with the engine's figure is not shown:\n%s", text)
	}
}

func TestProbsLines(t *testing.T) {
	st := asciiStyles()
	text := map[int32]string{1: " the", 2: "\n", 3: "\x1b]52;c;aGk=\x07"}
	p := Probs{
		Title: "step 3",
		Candidates: []sample.Candidate{
			{ID: 1, Logit: 3, Prob: 0.5, Final: 0.7},
			{ID: 2, Logit: 2, Prob: 0.3, Final: 0.3},
			{ID: 3, Logit: 1, Prob: 0.1, Cut: true},
		},
		Chosen: 2, HasChosen: true, Entropy: 1.234,
		Text: func(id int32) string { return text[id] },
	}
	lines := ProbsLines(st, p, 56, 10)
	if len(lines) != 5 {
		t.Fatalf("want title, header and 3 rows, got %d:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], "H 1.78 bits") { // 1.234 nats / ln 2
		t.Errorf("no entropy in %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "  ␣the") || !strings.Contains(lines[2], "70.0%") || !strings.Contains(lines[2], "3.00") {
		t.Errorf("first row %q", lines[2])
	}
	if !strings.HasPrefix(lines[3], "● ↵") {
		t.Errorf("sampled row not marked: %q", lines[3])
	}
	if !strings.Contains(lines[4], `\x1B]52`) || !strings.Contains(lines[4], "cut") || strings.Contains(lines[4], "█") {
		t.Errorf("cut row %q", lines[4])
	}
	for _, l := range lines {
		if termtext.Width(l) > 56 {
			t.Errorf("row wider than 56: %q", l)
		}
		if strings.ContainsAny(l, "\x1b\x07") {
			t.Errorf("control byte reached the panel: %q", l)
		}
	}
	if got := ProbsLines(st, p, 56, 3); len(got) != 3 {
		t.Errorf("maxRows not respected: %d", len(got))
	}
	for _, w := range []int{0, 5, 12, 20, 30} {
		for _, l := range ProbsLines(st, p, w, 10) {
			if termtext.Width(l) > max(w, 0) && w >= 20 {
				t.Errorf("width %d: row %q", w, l)
			}
		}
	}
}

func TestBoxShape(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{0, 3, 4, 10, 40} {
		rows := Box(st, "Title that is long", []string{"a", "a very long line that does not fit"}, w)
		if len(rows) < 2 {
			t.Fatalf("width %d: %d rows", w, len(rows))
		}
		for _, r := range rows {
			if termtext.Width(r) != w {
				t.Errorf("width %d: row %q is %d wide", w, r, termtext.Width(r))
			}
		}
	}
}

func TestSamplerLinesShowOffValues(t *testing.T) {
	st := asciiStyles()
	p := sample.Params{Temperature: 0, TopK: 0, TopP: 1, MinP: 0, RepeatPenalty: 1, Seed: 7}
	got := strings.Join(SamplerLines(st, p, "", 80), " ")
	for _, want := range []string{"temp 0 greedy", "top-p off", "top-k off", "min-p off", "repeat off", "seed 7"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if rows := SamplerLines(st, sample.Defaults(), "", 20); len(rows) < 3 {
		t.Errorf("settings do not flow onto more rows when narrow: %q", rows)
	}
}

func TestStatusLinesFit(t *testing.T) {
	st := asciiStyles()
	s := Status{Params: sample.Defaults(), Metrics: Metrics{ContextUsed: 10, ContextSize: 100, Speeds: []float64{1, 2}}, Probs: Probs{Title: "next token", Empty: "none yet"}}
	for _, rows := range []int{0, 1, 2, 3} {
		got := StatusLines(st, s, 50, rows)
		if len(got) != rows {
			t.Errorf("rows=%d: got %d", rows, len(got))
		}
		for _, l := range got {
			if termtext.Width(l) != 50 {
				t.Errorf("row %q not 50 wide", l)
			}
		}
	}
}
