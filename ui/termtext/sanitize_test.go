package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\tworld\n", "hello\tworld\n"},
		{"osc52 clipboard write, BEL", "a\x1b]52;c;ZWNobyBwd25lZA==\x07b", "ab"},
		{"osc52 clipboard write, ST", "a\x1b]52;c;ZWNobw==\x1b\\b", "ab"},
		{"osc title", "\x1b]0;pwned\x07ok", "ok"},
		{"osc 8 hyperlink", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"csi colour", "\x1b[31mred\x1b[0m", "red"},
		{"csi cursor and erase", "x\x1b[2J\x1b[H\x1b[?1049hy", "xy"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"apc, pm, sos", "1\x1b_k\x1b\\2\x1b^p\x1b\\3\x1bXs\x1b\\4", "1234"},
		{"full reset ESC c", "a\x1bcb", "ab"},
		{"charset designation", "a\x1b(Bb", "ab"},
		{"c1 csi", "a\u009b31mb", "ab"},
		{"c1 osc with c1 st", "a\u009d52;c;eA==\u009cb", "ab"},
		{"c0 controls", "a\x00b\x07c\x08d\re\x7ff", "abcdef"},
		{"c1 control NEL", "a\u0085b", "ab"},
		{"unterminated osc swallows the rest", "ok\x1b]52;c;AAAA", "ok"},
		{"lone esc at end", "ok\x1b", "ok"},
		{"esc then newline keeps newline", "a\x1b\nb", "a\nb"},
		{"csi interrupted by newline", "a\x1b[31\nb", "a\nb"},
		{"can aborts osc", "a\x1b]0;t\x18b", "ab"},
		{"invalid utf8", "a\xffb\xe2\x82", "a\uFFFDb\uFFFD\uFFFD"},
		{"unicode kept", "héllo 世界 🙂", "héllo 世界 🙂"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			got, src := SanitizeMap(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeMap(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(src) != len(got) {
				t.Fatalf("map has %d entries for %d bytes", len(src), len(got))
			}
			for i := 1; i < len(src); i++ {
				if src[i] < src[i-1] || src[i] >= len(tt.in) {
					t.Fatalf("map not increasing within the input: %v", src)
				}
			}
		})
	}
}

func TestSanitizeMapPointsAtSource(t *testing.T) {
	in := "ab\x1b[1mcd\x1b[0mé"
	out, src := SanitizeMap(in)
	if out != "abcdé" {
		t.Fatalf("got %q", out)
	}
	for i := 0; i < len(out); i++ {
		if out[i] != in[src[i]] {
			t.Errorf("byte %d (%q) maps to %d (%q)", i, out[i], src[i], in[src[i]])
		}
	}
}

// FuzzSanitize checks that nothing a terminal would act on survives.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;aGk=\x07", "\x1b[31m", "\u009b2J", "a\x1bPq\x1b\\", "\xff\xfe", "ok\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("control %U survived in %q (from %q)", r, out, s)
			}
		}
		if m, _ := SanitizeMap(s); m != out {
			t.Fatalf("Sanitize and SanitizeMap disagree on %q", s)
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{" the", "␣the"},
		{"\n", "↵"},
		{"\t", "⇥"},
		{"\r\n", `\x0D↵`},
		{"\x1b]52;c;aGk=\x07", `\x1B]52;c;aGk=\x07`},
		{"\xe2\x82", `\xE2\x82`},
		{"\u0085", `\u0085`},
		{"\u202e", `\u202E`},
		{"\u00a0", `\u00A0`},
		{"é", "é"},
		{"", "∅"},
	}
	for _, tt := range tests {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.ContainsAny(Visible(tt.in), "\x1b\x07\n\r") {
			t.Errorf("Visible(%q) still holds a control", tt.in)
		}
	}
}
