package tokenizer

import (
	"strings"
	"testing"
)

func TestStream(t *testing.T) {
	cases := []struct {
		vocab string
		ids   []int32
		want  []string // Add results, then Flush
	}{
		// "🚀" as byte-fallback tokens <0xF0><0x9F><0x9A><0x80> (llama-spm.out).
		{"llama-spm", []int32{243, 162, 157, 131}, []string{"", "", "", "🚀", ""}},
		// The same rocket in GPT-2: "ðŁ" (F0 9F), 0x9A, 0x80 (gpt-2.out).
		{"gpt-2", []int32{8582, 248, 222}, []string{"", "", "🚀", ""}},
		// Generation stopping mid-character leaves one replacement character.
		{"llama-spm", []int32{15043, 243, 162}, []string{" Hello", "", "", "\uFFFD"}},
		// A sequence broken by a non-continuation byte is one U+FFFD, then
		// the byte itself: <0xE2><0x82> then "a".
		{"llama-spm", []int32{3 + 0xE2, 3 + 0x82, 3 + 'a'}, []string{"", "", "\uFFFDa", ""}},
		// A surrogate encoding is ill-formed from its second byte on.
		{"llama-spm", []int32{3 + 0xED, 3 + 0xA0, 3 + 0x80}, []string{"", "\uFFFD\uFFFD", "\uFFFD", ""}},
		// A byte that can never start a character is not held back.
		{"llama-spm", []int32{3 + 0xFF, 15043}, []string{"\uFFFD", " Hello", ""}},
		// Control tokens render as nothing.
		{"gpt-2", []int32{15496, 50256, 995}, []string{"Hello", "", " world", ""}},
	}
	for _, c := range cases {
		tk := load(t, c.vocab)
		s := tk.NewStream()
		var got []string
		for _, x := range c.ids {
			got = append(got, s.Add(x))
		}
		got = append(got, s.Flush())
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s %v: got %q, want %q", c.vocab, c.ids, got, c.want)
		}
	}
}

// TestStreamMatchesDecode: streaming the tokens of any text reproduces it.
func TestStreamMatchesDecode(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			for _, text := range roundTripTexts {
				s := tk.NewStream()
				var b strings.Builder
				for _, x := range tk.Encode(text, false, false) {
					b.WriteString(s.Add(x))
				}
				b.WriteString(s.Flush())
				want := text
				if tk.addSpacePrefix && text != "" {
					want = " " + text // a stream continues a prompt: nothing to strip
				}
				if b.String() != want {
					t.Errorf("%s: stream %q, want %q", name, b.String(), want)
				}
			}
		})
	}
}
