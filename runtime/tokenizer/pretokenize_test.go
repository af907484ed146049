package tokenizer

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func splitWith(s splitStep, text string) []string {
	t := &splitText{cpts: decodeCpts(text, nil)}
	var words []string
	start := 0
	for _, n := range s.split(t, []int{len(t.cpts)}) {
		words = append(words, string(t.cpts[start:start+n]))
		start += n
	}
	return words
}

// TestSplitKnown pins splits that Hugging Face tokenizers produce for the
// original regexes (the llama-bpe ids of this sentence are in llama.cpp's
// test-tokenizer-0 comments; gpt-2's are in the shared .out file).
func TestSplitKnown(t *testing.T) {
	const s = "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～"
	cases := []struct {
		name string
		step splitStep
		want []string
	}{
		{"gpt2", customGPT2{}, []string{"Hello", ",", " y", "'", "all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "1314151", "天", "～"}},
		{"llama3", customLlama3{maxDigits: 3}, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "131", "415", "1", "天", "～"}},
		{"qwen2", customLlama3{maxDigits: 1}, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "1", "3", "1", "4", "1", "5", "1", "天", "～"}},
	}
	for _, c := range cases {
		if got := splitWith(c.step, s); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
	// \s+(?!\S) leaves the last space for the next word; \s*[\r\n]+ keeps
	// spaces before a newline together.
	if got := splitWith(customLlama3{maxDigits: 3}, "a   b  \n\nc  "); !slices.Equal(got, []string{"a", "  ", " b", "  \n\n", "c", "  "}) {
		t.Errorf("llama3 whitespace: %q", got)
	}
	if got := splitWith(customGPT2{}, "a   b\n\n c"); !slices.Equal(got, []string{"a", "  ", " b", "\n\n", " c"}) {
		t.Errorf("gpt2 whitespace: %q", got)
	}
}

// randomText draws from characters that sit on every class boundary the
// pre-tokenizers care about.
func randomText(r *rand.Rand, n int) string {
	pool := []string{
		"a", "Z", "é", "ß", "ж", "我", "工", "가", "ก", "ั", "\u0301", "ǅ",
		"0", "7", "٣", "½", "Ⅻ",
		" ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u00a0", "\u2009", "\u3000", "\u0085",
		"'", "'s", "'T", "'re", "'LL", "'d", "!", ".", ",", "?", "-", "_", "(", "[", "{", "~", "$", "+", "<", "^", "`", "|", "@", "#", "%", "&", "*", "/", ":", ";", "\\",
		"😁", "🚀", "€", "©", "±", "\u200d", "\ufe0f", "\x01", "\x1f", "\x7f", "\ue000", "\U000e0001", "\U0002ebf0",
		"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\x80",
	}
	var b strings.Builder
	for range n {
		b.WriteString(pool[r.Intn(len(pool))])
	}
	return b.String()
}

// TestCustomSplittersMatchRegex runs llama.cpp's original regexes through
// regexp2 on llama.cpp's collapsed text and requires the hand-written
// splitters (ported from llama.cpp) to agree on random input.
func TestCustomSplittersMatchRegex(t *testing.T) {
	cases := []struct {
		expr   string
		custom splitStep
	}{
		{reGPT2, customGPT2{}},
		{reLlama3, customLlama3{maxDigits: 3}},
		{reQwen2, customLlama3{maxDigits: 1}},
	}
	r := rand.New(rand.NewSource(1))
	for _, c := range cases {
		ref, err := compileRegexStep(c.expr, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			s := randomText(r, 1+r.Intn(24))
			if got, want := splitWith(c.custom, s), splitWith(ref, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\n custom %q\n regex  %q", c.expr, s, got, want)
			}
		}
	}
}

// TestRegexEnginesAgree: patterns without look-around run on Go's regexp in
// production; regexp2 must split them identically.
func TestRegexEnginesAgree(t *testing.T) {
	var exprs []string
	for _, p := range []preConfig{preDefault, preFalcon, preStarcoder, preDeepseekCoder, preDeepseekLLM} {
		for _, e := range p.regexes {
			if e != reGPT2 {
				exprs = append(exprs, e)
			}
		}
	}
	r := rand.New(rand.NewSource(2))
	for _, e := range exprs {
		fast, err := compileRegexStep(e, false)
		if err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		if fast.re == nil {
			t.Fatalf("%q should run on Go's regexp", e)
		}
		ref, err := compileRegexStep(e, true)
		if err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		for i := 0; i < 1000; i++ {
			s := randomText(r, 1+r.Intn(24))
			if got, want := splitWith(fast, s), splitWith(ref, s); !slices.Equal(got, want) {
				t.Fatalf("%q on %q:\n regexp  %q\n regexp2 %q", e, s, got, want)
			}
		}
	}
}

func TestTranslateRegex(t *testing.T) {
	cases := []struct {
		expr      string
		collapsed bool
		want      string
	}{
		{`\p{N}+`, true, "[\u00d10-9]+"},
		{`[^\s\p{L}]`, true, "[^\\t\\n\\v\\f\\r \u00d2A-Za-z]"},
		{`\s+(?!\S)`, false, `[\t\n\v\f\r ]+(?![^\t\n\v\f\r ])`},
		{`\$`, false, `\$`},
	}
	for _, c := range cases {
		got, err := translateRegex(c.expr, c.collapsed, false)
		if err != nil || got != c.want {
			t.Errorf("translateRegex(%q) = %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	if got, _ := translateRegex(`\s+$`, false, true); got != `[\t\n\v\f\r ]+\z` {
		t.Errorf("regexp2 $: %q", got)
	}
	if _, err := translateRegex(`\d+`, false, false); err == nil {
		t.Error(`\d accepted; std::regex and Go disagree on it`)
	}
}

// TestPreTypesBuild compiles every supported pre-tokenizer.
func TestPreTypesBuild(t *testing.T) {
	for name, cfg := range preTypes {
		p, err := newPreTokenizer(name, cfg.regexes)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if w := p.words("Hello, world 123!\n"); strings.Join(w, "") != "Hello,Ġworld123!Ċ" && strings.Join(w, "") != "Hello,ĠworldĠ123!Ċ" {
			t.Errorf("%s: words %q lose text", name, w)
		}
	}
}

func TestDecodeCpts(t *testing.T) {
	cases := []struct {
		in   string
		want []rune
	}{
		{"aé€😁", []rune{'a', 'é', '€', '😁'}},
		{"\xff\x80", []rune{0xFFFD, 0xFFFD}},
		{"\xc3", []rune{0xFFFD}},
		{"\xe2\x82", []rune{0xFFFD, 0xFFFD}},
		{"\xc0\x80", []rune{0}},          // overlong: llama.cpp decodes it
		{"\xed\xa0\x80", []rune{0xD800}}, // surrogate: likewise
		{"\xf7\xbf\xbf\xbf", []rune{0xFFFD}},
	}
	for _, c := range cases {
		if got := decodeCpts(c.in, nil); !slices.Equal(got, c.want) {
			t.Errorf("decodeCpts(%q) = %U, want %U", c.in, got, c.want)
		}
	}
	if got := string(appendCpt(nil, 0xD800)); got != "\xed\xa0\x80" {
		t.Errorf("appendCpt surrogate = %q", got)
	}
}

func TestCptFlags(t *testing.T) {
	cases := []struct {
		c    rune
		want uint8
	}{
		{'a', cLetter}, {'5', cNumber}, {' ', cSeparator | cSpace}, {'\n', cControl | cSpace},
		{'!', cPunct}, {'~', cSymbol}, {'\u0301', cAccent}, {'\u00a0', cSeparator | cSpace},
		{'\u0085', cControl | cSpace}, {0x2EBF0, cLetter}, {0x31EF, cSymbol}, {0xE000, cControl},
		{0x0378, cControl}, {'😁', cSymbol}, {0xD800, cControl}, {-1, 0}, {maxCodepoint, 0},
	}
	for _, c := range cases {
		if got := cptFlags(c.c); got != c.want {
			t.Errorf("cptFlags(%U) = %08b, want %08b", c.c, got, c.want)
		}
	}
}

// TestDeepseekLetters: DeepSeek's class lists cased letters (Lu, Ll, Lt) and
// nothing else; a normalized copy (U+212A turned into "K") would fail here.
func TestDeepseekLetters(t *testing.T) {
	n := 0
	for _, r := range deepseekLetters {
		if r[0] > r[1] {
			t.Fatalf("bad range %U-%U", r[0], r[1])
		}
		for c := r[0]; c <= r[1]; c++ {
			if !unicode.In(c, unicode.Lu, unicode.Ll, unicode.Lt) {
				t.Errorf("%U in the letter class is not a cased letter", c)
			}
			n++
		}
	}
	for _, c := range []rune{0x212A, 0x2126, 0x1F7D, 0x1FBE} {
		if !strings.ContainsRune(runeClass(deepseekLetters), c) {
			t.Errorf("%U missing", c)
		}
	}
	if n < 1000 {
		t.Errorf("only %d letters", n)
	}
}
