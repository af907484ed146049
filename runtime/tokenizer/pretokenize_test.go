package tokenizer

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2"
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
		{"qwen35", customLlama3{maxDigits: 1, marks: true}, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "1", "3", "1", "4", "1", "5", "1", "天", "～"}},
		{"o200k", customO200k{}, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "131", "415", "1", "天", "～"}},
	}
	for _, c := range cases {
		if got := splitWith(c.step, s); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
	// o200k (as tiktoken splits it, with Python's regex module as the
	// reference): case runs, contractions glued to the word in any case,
	// combining marks inside words, slashes and line breaks after
	// punctuation.
	o200k := []struct {
		in   string
		want []string
	}{
		{"HTTPServer WE'RE don'T I've ſ'ſ", []string{"HTTPServer", " WE'RE", " don'T", " I've", " ſ'ſ"}},
		{"កាន់តែពិសេស हिन्दी Führer", []string{"កាន់តែពិសេស", " हिन्दी", " Führer"}},
		{"path/to/x;\r\n// c  \n\n  end  ", []string{"path", "/to", "/x", ";\r\n//", " c", "  \n\n", " ", " end", "  "}},
	}
	for _, c := range o200k {
		if got := splitWith(customO200k{}, c.in); !slices.Equal(got, c.want) {
			t.Errorf("o200k %q:\n got  %q\n want %q", c.in, got, c.want)
		}
	}
	// qwen35 keeps combining marks in their word where qwen2 cuts them off
	// (a mark there is at best the one non-letter before a word).
	for _, c := range []struct {
		in            string
		qwen2, qwen35 []string
	}{
		{"हिन्दी", []string{"ह", "िन", "्द", "ी"}, []string{"हिन्दी"}},
		{" cafe\u0301!\u0301", []string{" cafe", "\u0301!\u0301"}, []string{" cafe\u0301", "!\u0301"}},
	} {
		if got := splitWith(customLlama3{maxDigits: 1}, c.in); !slices.Equal(got, c.qwen2) {
			t.Errorf("qwen2 %q:\n got  %q\n want %q", c.in, got, c.qwen2)
		}
		if got := splitWith(customLlama3{maxDigits: 1, marks: true}, c.in); !slices.Equal(got, c.qwen35) {
			t.Errorf("qwen35 %q:\n got  %q\n want %q", c.in, got, c.qwen35)
		}
	}
	// tekken: o200k's letter runs without contractions, single digits.
	tekken := []struct {
		in   string
		want []string
	}{
		{s, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "1", "3", "1", "4", "1", "5", "1", "天", "～"}},
		{"HTTPServer WE'RE don'T I've", []string{"HTTPServer", " WE", "'RE", " don", "'T", " I", "'ve"}},
		{"Führer हिन्दी x/y;\r\n", []string{"Führer", " हिन्दी", " x", "/y", ";\r\n"}},
	}
	for _, c := range tekken {
		if got := splitWith(customO200k{tekken: true}, c.in); !slices.Equal(got, c.want) {
			t.Errorf("tekken %q:\n got  %q\n want %q", c.in, got, c.want)
		}
	}
	// deepseek-v3 (llama.cpp's DEEPSEEK3_LLM, three regexes in turn): digit
	// triples, CJK/kana runs, then a punctuation mark glued to the ASCII
	// word after it, letter-and-mark words with one leading non-letter,
	// punctuation/symbol runs; a digit run matches no alternative of the
	// last regex and stays whole.
	ds, err := newPreTokenizer("deepseek-v3", preDeepseekV3.regexes)
	if err != nil {
		t.Fatal(err)
	}
	deepseek := []struct {
		in   string
		want []string
	}{
		{s, []string{"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在", "apple", "工作", "131", "415", "1", "天", "～"}},
		{"a.Bar 3.14 ひらがなカタカナ漢字 x++;\n", []string{"a", ".Bar", " ", "3", ".", "14", " ", "ひらがなカタカナ漢字", " x", "++;\n"}},
	}
	for _, c := range deepseek {
		var got []string
		for _, w := range ds.words(c.in) {
			got = append(got, string(decodeByteLevel(w)))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("deepseek-v3 %q:\n got  %q\n want %q", c.in, got, c.want)
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
		{reQwen35, customLlama3{maxDigits: 1, marks: true}},
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
	for _, p := range []preConfig{preDefault, preFalcon, preStarcoder, preDeepseekCoder, preDeepseekLLM, {regexes: preDeepseekV3.regexes[:2]}} {
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

// o200kReference is reO200k for regexp2 with the classes spelled out:
// .NET's \s is narrower than Unicode's White_Space, and its (?i) does not
// fold U+017F to s as tiktoken's engine does.
const o200kReference = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|` +
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|` +
	`\p{N}{1,3}| ?[^\t\n\v\f\r\x85\p{Z}\p{L}\p{N}]+[\r\n/]*|[\t\n\v\f\r\x85\p{Z}]*[\r\n]+|[\t\n\v\f\r\x85\p{Z}]+(?![^\t\n\v\f\r\x85\p{Z}])|[\t\n\v\f\r\x85\p{Z}]+`

// regexp2Split splits text with a regexp2 pattern on the code points as
// they are, for references that use Unicode's own categories.
type regexp2Split struct{ re *regexp2.Regexp }

func (s regexp2Split) split(t *splitText, offsets []int) []int {
	var out []int
	last := 0
	m, _ := s.re.FindRunesMatch(t.cpts)
	for m != nil {
		if m.Index > last {
			out = append(out, m.Index-last)
		}
		out = append(out, m.Length)
		last = m.Index + m.Length
		m, _ = s.re.FindNextMatch(m)
	}
	if last < len(t.cpts) {
		out = append(out, len(t.cpts)-last)
	}
	return out
}

// tekkenReference is reTekken for regexp2, its classes spelled out as
// o200kReference's are.
const tekkenReference = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|` +
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|` +
	`\p{N}| ?[^\t\n\v\f\r\x85\p{Z}\p{L}\p{N}]+[\r\n/]*|[\t\n\v\f\r\x85\p{Z}]*[\r\n]+|[\t\n\v\f\r\x85\p{Z}]+(?![^\t\n\v\f\r\x85\p{Z}])|[\t\n\v\f\r\x85\p{Z}]+`

// TestO200kMatchesRegex holds customO200k to the o200k pattern (and, with
// tekken set, to the tekken pattern) run by a backtracking engine, on
// random text rich in the case and mark classes that pattern tells apart.
func TestO200kMatchesRegex(t *testing.T) {
	t.Run("o200k", func(t *testing.T) { checkO200kFamily(t, customO200k{}, o200kReference) })
	t.Run("tekken", func(t *testing.T) { checkO200kFamily(t, customO200k{tekken: true}, tekkenReference) })
}

func checkO200kFamily(t *testing.T, custom customO200k, reference string) {
	re, err := regexp2.Compile(reference, regexp2.None)
	if err != nil {
		t.Fatal(err)
	}
	ref := regexp2Split{re}
	extra := []string{
		"É", "Ж", "ж", "ǅ", "ǈ", "ʰ", "ー", "ſ", "'S", "'ſ", "'Ll", "'VE", "/", "\r/", "\n//",
		"ក", "ា", "់", "ि", "क", "\u0903", "\u20dd", "Ⅻ", "\u00ad", "A\u0301", "a\u0301",
	}
	r := rand.New(rand.NewSource(3))
	n := 0
	for n < 20000 {
		var b strings.Builder
		for range 1 + r.Intn(20) {
			if r.Intn(2) == 0 {
				b.WriteString(extra[r.Intn(len(extra))])
			} else {
				b.WriteString(randomText(r, 1))
			}
		}
		s := b.String()
		if strings.ContainsRune(s, 0x2EBF0) {
			continue // Unicode 15.1: a letter to cptFlags, unassigned to Go's tables
		}
		n++
		if got, want := splitWith(custom, s), splitWith(ref, s); !slices.Equal(got, want) {
			t.Fatalf("on %q:\n custom %q\n regex  %q", s, got, want)
		}
	}
}
