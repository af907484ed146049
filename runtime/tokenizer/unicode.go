package tokenizer

import (
	"sync"
	"unicode"
)

// Code point classes, one bit each, as llama.cpp's unicode_cpt_flags uses
// them for pre-tokenization. Unassigned code points count as control: in
// llama.cpp they are "undefined", which behaves identically everywhere the
// splitters look (non-zero flags, no category byte in the collapsed text).
const (
	cNumber uint8 = 1 << iota
	cLetter
	cSeparator
	cAccent
	cPunct
	cSymbol
	cControl
	cSpace // \s: the Unicode White_Space property
)

const maxCodepoint = 0x110000

var (
	flagsOnce  sync.Once
	flagsTable []uint8
)

// cptFlags returns the class bits of c; 0 only for values outside Unicode,
// which the splitters use as "past the end of the fragment".
func cptFlags(c rune) uint8 {
	if c < 0 || c >= maxCodepoint {
		return 0
	}
	if c < 0x80 {
		return asciiFlags[c]
	}
	flagsOnce.Do(buildFlags)
	return flagsTable[c]
}

var asciiFlags = func() (t [0x80]uint8) {
	for c := range t {
		t[c] = classify(rune(c))
	}
	return t
}()

func classify(c rune) uint8 {
	var f uint8
	switch {
	case unicode.Is(unicode.L, c) || isUnicode151Letter(c):
		f = cLetter
	case unicode.Is(unicode.N, c):
		f = cNumber
	case unicode.Is(unicode.Z, c):
		f = cSeparator
	case unicode.Is(unicode.M, c):
		f = cAccent
	case unicode.Is(unicode.P, c):
		f = cPunct
	case unicode.Is(unicode.S, c) || isUnicode151Symbol(c):
		f = cSymbol
	default:
		f = cControl
	}
	if unicode.Is(unicode.White_Space, c) {
		f |= cSpace
	}
	return f
}

// Letter classes of the o200k pre-tokenizer: caseUpper is
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], caseLower is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
const (
	caseUpper uint8 = 1 << iota
	caseLower
)

// caseClass returns c's o200k letter classes: cased letters are in one,
// modifier and other letters (Lm, Lo) and marks in both, the rest in none.
func caseClass(c rune) uint8 {
	fl := cptFlags(c)
	switch {
	case fl&cAccent != 0:
		return caseUpper | caseLower
	case fl&cLetter == 0:
		return 0
	case c < 0x80:
		if c <= 'Z' {
			return caseUpper
		}
		return caseLower
	case unicode.IsUpper(c) || unicode.IsTitle(c):
		return caseUpper
	case unicode.IsLower(c):
		return caseLower
	}
	return caseUpper | caseLower
}

// llama.cpp's tables were generated from Unicode 15.1; Go ships 15.0. These
// are the only code points 15.1 added.
func isUnicode151Letter(c rune) bool { return c >= 0x2EBF0 && c <= 0x2EE5D }
func isUnicode151Symbol(c rune) bool { return (c >= 0x2FFC && c <= 0x2FFF) || c == 0x31EF }

func buildFlags() {
	t := make([]uint8, maxCodepoint)
	for i := range t {
		t[i] = cControl
	}
	set := func(rt *unicode.RangeTable, f uint8) {
		for _, r := range rt.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c] = f
			}
		}
		for _, r := range rt.R32 {
			for c := r.Lo; c <= r.Hi; c += r.Stride {
				t[c] = f
			}
		}
	}
	set(unicode.L, cLetter)
	set(unicode.N, cNumber)
	set(unicode.Z, cSeparator)
	set(unicode.M, cAccent)
	set(unicode.P, cPunct)
	set(unicode.S, cSymbol)
	for c := rune(0x2EBF0); c <= 0x2EE5D; c++ {
		t[c] = cLetter
	}
	for _, c := range []rune{0x2FFC, 0x2FFD, 0x2FFE, 0x2FFF, 0x31EF} {
		t[c] = cSymbol
	}
	for _, r := range unicode.White_Space.R16 {
		for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
			t[c] |= cSpace
		}
	}
	flagsTable = t
}

// decodeCpts splits s into code points the way llama.cpp's
// unicode_cpts_from_utf8 does: the lead byte alone decides the length, only
// continuation bits are checked (so overlong forms and surrogates decode),
// and a bad sequence yields U+FFFD for one byte. Values above U+10FFFF, which
// llama.cpp would throw on when re-encoding, become U+FFFD here.
func decodeCpts(s string, out []rune) []rune {
	for i := 0; i < len(s); {
		c, n := decodeOne(s, i)
		out = append(out, c)
		i += n
	}
	return out
}

func decodeOne(s string, i int) (rune, int) {
	b := s[i]
	cont := func(j int) bool { return j < len(s) && s[j]&0xC0 == 0x80 }
	switch {
	case b&0x80 == 0:
		return rune(b), 1
	case b&0x40 == 0:
		return 0xFFFD, 1
	case b&0x20 == 0:
		if !cont(i + 1) {
			return 0xFFFD, 1
		}
		return rune(b&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case b&0x10 == 0:
		if !cont(i+1) || !cont(i+2) {
			return 0xFFFD, 1
		}
		return rune(b&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case b&0x08 == 0:
		if !cont(i+1) || !cont(i+2) || !cont(i+3) {
			return 0xFFFD, 1
		}
		c := rune(b&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
		if c >= maxCodepoint {
			c = 0xFFFD
		}
		return c, 4
	}
	return 0xFFFD, 1
}

// appendCpt encodes c as llama.cpp's unicode_cpt_to_utf8 does. Unlike
// utf8.AppendRune it keeps surrogates, which decodeCpts can produce, so the
// bytes a user typed survive into byte-level BPE.
func appendCpt(b []byte, c rune) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xC0|byte(c>>6), 0x80|byte(c)&0x3F)
	case c < 0x10000:
		return append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6)&0x3F, 0x80|byte(c)&0x3F)
	default:
		return append(b, 0xF0|byte(c>>18), 0x80|byte(c>>12)&0x3F, 0x80|byte(c>>6)&0x3F, 0x80|byte(c)&0x3F)
	}
}

// utf8Len is llama.cpp's unicode_len_utf8: the sequence length the lead byte
// announces, used to cut text into symbols before merging.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// GPT-2's byte-level alphabet: every byte gets a printable code point so BPE
// vocabularies never contain raw control bytes or spaces.
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// isCSpace is C's isspace in the "C" locale, which llama.cpp uses to strip
// around special tokens with lstrip/rstrip.
func isCSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}
