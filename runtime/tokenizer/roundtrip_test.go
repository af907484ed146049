package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTripTexts are strings that exercise spaces, newlines, scripts, emoji
// and byte fallback; each vocabulary must give them back unchanged.
var roundTripTexts = []string{
	"",
	" ",
	"Hello world",
	"  leading and trailing  ",
	"\n\n\tindent\r\nwindows\r\n",
	"Hello, y'all! How are you 😁 ?我想在apple工作1314151天～",
	"нещо на Български",
	"កាន់តែពិសេសអាចខលចេញ",
	"🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅",
	"' era don't I'LL we'VE",
	"3333333 1.5e-3 0x1F",
	"\u00a0nbsp\u2009thin\u3000ideographic",
	"\x01\x02 control \x7f",
	"Äpfel õ÷Áý",
	strings.Repeat("long", 300),
}

func TestRoundTrip(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			texts := append([]string(nil), roundTripTexts...)
			for _, c := range readCases(t, name) {
				texts = append(texts, c.text)
			}
			for _, s := range texts {
				ids := tk.Encode(s, false, false)
				if got := tk.Decode(ids); got != s {
					t.Errorf("Decode(Encode(%q)) = %q (ids %v)", s, got, ids)
				}
				// A BOS in front must not change the text either; llama.cpp
				// then keeps the space prefix, so only compare the tail.
				withBOS := tk.Encode(s, true, false)
				if tk.addBOS && (len(withBOS) == 0 || withBOS[0] != tk.BOS()) {
					t.Errorf("Encode(%q, addSpecial) = %v, want BOS %d first", s, withBOS, tk.BOS())
				}
			}
		})
	}
}

// TestTokenRoundTrip is llama.cpp's test-tokenizer-1 check: each token's text
// tokenizes (with special parsing) to something that detokenizes to the same
// text. Pieces that are not valid UTF-8 (lone byte tokens) are skipped there
// too.
func TestTokenRoundTrip(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			bad := 0
			for id := int32(0); id < int32(tk.VocabSize()); id++ {
				s := tk.Decode([]int32{id})
				if !utf8.ValidString(s) {
					continue
				}
				ids := tk.Encode(s, false, true)
				if got := tk.Decode(ids); got != s {
					if bad++; bad <= 10 {
						t.Errorf("token %d %q: piece %q re-encodes to %v = %q", id, tk.TokenText(id), s, ids, got)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d tokens failed", bad)
			}
		})
	}
}

// TestPieces checks Piece against the vocabulary text by each token kind's
// own spelling rules.
func TestPieces(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			for id := int32(0); id < int32(tk.VocabSize()); id++ {
				text, p := tk.TokenText(id), tk.Piece(id)
				a := tk.tokens[id].attr
				var want string
				switch {
				case a&(attrControl|attrUnknown) != 0:
					want = ""
				case a&(attrNormal|attrUserDefined|attrByte) == 0:
					// Unused (type 5, gpt-oss's [PAD...] tokens) and
					// undefined tokens render as nothing, as llama.cpp
					// suppresses every type it does not support.
					want = ""
				case a&attrUserDefined != 0:
					want = text
				case a&attrByte != 0:
					b, _ := parseByteToken(text)
					want = string([]byte{b})
				case tk.kind == kindSPM:
					want = strings.ReplaceAll(text, "▁", " ")
				default:
					// Re-encoding the bytes through GPT-2's alphabet must
					// give the vocabulary text back.
					var enc []byte
					for _, b := range p {
						enc = utf8.AppendRune(enc, byteToRune[b])
					}
					if string(enc) != text {
						t.Fatalf("token %d %q: piece %x re-encodes to %q", id, text, p, enc)
					}
					continue
				}
				if string(p) != want {
					t.Fatalf("token %d %q: Piece = %q, want %q", id, text, p, want)
				}
			}
			if tk.Piece(-1) != nil || tk.Piece(int32(tk.VocabSize())) != nil {
				t.Error("Piece out of range is not nil")
			}
		})
	}
}

// TestCodepointRoundTrip follows test-tokenizer-1-bpe: " " + one code point
// must survive Encode/Decode. The whole BMP is covered, the astral planes at
// a stride to keep the test fast.
func TestCodepointRoundTrip(t *testing.T) {
	stride := rune(13)
	if testing.Short() {
		stride = 97
	}
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk := load(t, name)
			bad := 0
			for cp := rune(0); cp < maxCodepoint; cp++ {
				if cp >= 0xD800 && cp < 0xE000 || cp == 0x2581 {
					continue // surrogates are not text; SPM turns ▁ into a space
				}
				if cp >= 0x10000 && cp%stride != 0 {
					continue
				}
				s := " " + string(cp)
				if got := tk.Decode(tk.Encode(s, false, false)); got != s {
					if bad++; bad <= 5 {
						t.Errorf("U+%04X: got %q", cp, got)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d code points failed", bad)
			}
		})
	}
}
