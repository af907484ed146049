package tokenizer

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// longText is the shared test strings (many scripts, emoji, code, spaces)
// repeated to about 256 KiB.
func longText(tb testing.TB) string {
	inp, err := os.ReadFile(testenv.Shared(tb, "vocab/ggml-vocab-gpt-2.gguf.inp"))
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.ReplaceAll(string(inp), "__ggml_vocab_test__", "")
	return strings.Repeat(s, 256<<10/len(s)+1)[:256<<10]
}

func BenchmarkEncode(b *testing.B) {
	for _, name := range vocabNames {
		b.Run(name, func(b *testing.B) {
			tk := load(b, name)
			text := longText(b)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tk.Encode(text, false, false)
			}
		})
	}
}

func BenchmarkEncodeLongWord(b *testing.B) {
	for _, name := range vocabNames {
		b.Run(name, func(b *testing.B) {
			tk := load(b, name)
			text := strings.Repeat("a", 100_000)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tk.Encode(text, false, false)
			}
		})
	}
}

// cpuTime is the process's user+system time. The timing guard below uses it
// rather than wall time because the test machine is shared.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLongWord guards against quadratic merging: one 100k-character word and
// 40k CJK characters without spaces must tokenize quickly and losslessly.
func TestLongWord(t *testing.T) {
	texts := map[string]string{
		"a×100k":  strings.Repeat("a", 100_000),
		"CJK×40k": strings.Repeat("我想在工作天", 40_000/6),
		"ws×100k": strings.Repeat(" ", 100_000) + "x",
	}
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			for label, s := range texts {
				start := cpuTime(t)
				ids := tk.Encode(s, false, false)
				if d := cpuTime(t) - start; d > time.Second {
					t.Errorf("%s %s: %v", name, label, d)
				}
				if got := tk.Decode(ids); got != s {
					t.Errorf("%s %s: round trip lost text (%d bytes back)", name, label, len(got))
				}
			}
		})
	}
}

func BenchmarkFromGGUF(b *testing.B) {
	for _, name := range vocabNames {
		b.Run(name, func(b *testing.B) {
			path := testenv.Shared(b, "vocab/ggml-vocab-"+name+".gguf")
			for b.Loop() {
				f, err := gguf.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := FromGGUF(f); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}

// TestO200kLongText bounds gpt-oss's tokenizer on 1 MiB inputs: the shared
// test strings, and runs that make o200k's letter alternatives give back
// characters (marks and upper case, which both letter classes take, then
// lower case or a space). Each takes well under a second; a splitter that
// rescanned a run per match would need hours.
func TestO200kLongText(t *testing.T) {
	tk := load(t, "gptoss")
	text := longText(t)
	for !utf8.ValidString(text) {
		text = text[:len(text)-1] // its cut splits a character
	}
	texts := map[string]string{
		"shared text": strings.Repeat(text, 4),
		"mark A B ␠":  strings.Repeat("\u0301AB ", 1<<20/5),
		"A mark":      strings.Repeat("A\u0301", 1<<20/3),
		"Aa'S":        strings.Repeat("Aa'S", 1<<20/4),
	}
	for label, s := range texts {
		start := cpuTime(t)
		ids := tk.Encode(s, false, false)
		if d := cpuTime(t) - start; d > 3*time.Second {
			t.Errorf("%s (%d bytes): %v", label, len(s), d)
		}
		if got := tk.Decode(ids); got != s {
			t.Errorf("%s: round trip lost text (%d of %d bytes back)", label, len(got), len(s))
		}
	}
}
