package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// fuzzEncode checks what must hold for any input: no panic, ids in range,
// streamed output is valid UTF-8 and agrees with Decode, and text the
// vocabulary can spell comes back unchanged.
func fuzzEncode(f *testing.F, name string, representable func(string) bool) {
	for _, s := range roundTripTexts {
		f.Add(s, false)
	}
	f.Add("<|im_start|>user\n<s></s><|endoftext|>", true)
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		tk := load(t, name)
		ids := tk.Encode(s, false, parseSpecial)
		for _, id := range ids {
			if id < 0 || int(id) >= tk.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		st := tk.NewStream()
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(st.Add(id))
		}
		b.WriteString(st.Flush())
		if !utf8.ValidString(b.String()) {
			t.Fatalf("stream produced invalid UTF-8 %q", b.String())
		}
		dec := tk.Decode(ids)
		if parseSpecial {
			return // control tokens in s render as nothing
		}
		if utf8.ValidString(dec) {
			prefix := ""
			if tk.addSpacePrefix && len(ids) > 0 && dec != "" {
				prefix = " "
			}
			if got := b.String(); got != prefix+dec && !(prefix != "" && got == dec) {
				t.Fatalf("stream %q, Decode %q", got, dec)
			}
		}
		if representable(s) && dec != s {
			t.Fatalf("Decode(Encode(%q)) = %q (%v)", s, dec, ids)
		}
	})
}

// SentencePiece with byte fallback spells any valid UTF-8 except ▁, which is
// its space. Invalid input is not required to survive: llama.cpp cuts
// characters by the lead byte alone, so a stray lead byte swallows the first
// byte of the next character (see TestSPMInvalidLeadByte).
func FuzzEncodeSPM(f *testing.F) {
	fuzzEncode(f, "llama-spm", func(s string) bool { return utf8.ValidString(s) && !strings.Contains(s, "▁") })
}

// Byte-level BPE spells any valid UTF-8; llama.cpp turns invalid bytes into
// U+FFFD first.
func FuzzEncodeBPE(f *testing.F) {
	fuzzEncode(f, "gpt-2", utf8.ValidString)
}

// deepseek-coder takes the regex (non-custom) pre-tokenizer path.
func FuzzEncodeBPERegex(f *testing.F) {
	fuzzEncode(f, "deepseek-coder", utf8.ValidString)
}

// gpt-oss's o200k_harmony takes the o200k splitter.
func FuzzEncodeO200k(f *testing.F) {
	fuzzEncode(f, "gptoss", utf8.ValidString)
}

// FuzzO200kSplit holds customO200k to the o200k pattern run by regexp2 (see
// TestO200kMatchesRegex) on any input.
func FuzzO200kSplit(f *testing.F) {
	for _, s := range roundTripTexts {
		f.Add(s)
	}
	f.Add("HTTPServer WE'RE don'T ſ'ſ \u0301A\u0301b /\r\n")
	re := regexp2.MustCompile(o200kReference, regexp2.None)
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsFunc(s, isUnicode151Letter) {
			t.Skip("Unicode 15.1 letters are unassigned in Go's tables")
		}
		if got, want := splitWith(customO200k{}, s), splitWith(regexp2Split{re}, s); !slices.Equal(got, want) {
			t.Fatalf("on %q:\n custom %q\n regex  %q", s, got, want)
		}
	})
}

// FuzzStream: feeding bytes one token at a time must give what a decoder of
// the whole byte string gives, and valid UTF-8 must pass through untouched.
func FuzzStream(f *testing.F) {
	f.Add([]byte("h\xe2\x82\xac\xf0\x9f\x9a\x80\xed\xa0\x80\xe2\x82a\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk := load(t, "llama-spm")
		st := tk.NewStream()
		var got strings.Builder
		for _, c := range b {
			got.WriteString(st.Add(tk.byteTok[c]))
		}
		got.WriteString(st.Flush())
		whole := (&Stream{t: tk, buf: append([]byte(nil), b...)}).Flush()
		if got.String() != whole {
			t.Fatalf("streamed %q, whole %q", got.String(), whole)
		}
		if !utf8.ValidString(whole) {
			t.Fatalf("invalid output %q", whole)
		}
		if utf8.Valid(b) && whole != string(b) {
			t.Fatalf("valid input changed: %q -> %q", b, whole)
		}
	})
}
