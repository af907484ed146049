package tokenizer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dlclark/regexp2"
)

// A pre-tokenizer cuts text into words before BPE merging. llama.cpp applies
// a list of regexes in turn: each one splits every current fragment into its
// matches and the gaps between them, and both are kept. The resulting
// fragment lengths are counted in code points.
type preTokenizer struct {
	name  string
	steps []splitStep
}

type splitStep interface {
	split(t *splitText, offsets []int) []int
}

// preConfig is what tokenizer.ggml.pre selects: the regex list and the
// vocabulary flags llama.cpp's loader sets alongside it.
type preConfig struct {
	regexes      []string
	ignoreMerges bool
	addBOS       bool
	noBOS        bool // chatglm: the default BOS id is cleared
}

// The regexes are copied verbatim from llama.cpp's llm_tokenizer_bpe
// constructor, so the custom splitters below are selected by the same string
// comparison llama.cpp's unicode_regex_split_custom does.
const (
	reGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3 = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2  = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// reQwen35 is qwen2's with combining marks counted as letters (Qwen3.5
	// and 3.6 files, tokenizer.ggml.pre "qwen35").
	reQwen35 = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// reO200k is tiktoken's o200k_base split pattern (also o200k_harmony's, the
// gpt-4o pre-tokenizer) as tiktoken runs it. llama.cpp's copy leaves \p{M}
// out of the letter classes, which splits words of scripts that write vowels
// as combining marks (Khmer, Devanagari) where tiktoken does not. customO200k
// implements it with Unicode's categories.
const reO200k = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
	`\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// reTekken is Mistral's tekken split pattern (Mistral Nemo, Ministral 3)
// as its tokenizer.json gives it: o200k's without the contractions and with
// single digits. llama.cpp rewrites it for std::regex (letters as "not a-z"
// and "not A-Z", marks left out); customO200k implements the original, as
// it does for gpt-4o.
const reTekken = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|` +
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|` +
	`\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var (
	preDefault = preConfig{regexes: []string{
		`[\p{P}\$\+<=>\^~\|]+`,
		reGPT2,
		`\p{N}+`,
		`[0-9][0-9][0-9]`,
	}}
	preLlama3      = preConfig{regexes: []string{reLlama3}, ignoreMerges: true, addBOS: true}
	preLlama3Plain = preConfig{regexes: []string{reLlama3}}
	preChatGLM4    = preConfig{regexes: []string{reLlama3}, noBOS: true}
	preGPT2        = preConfig{regexes: []string{reGPT2}}
	preStarcoder   = preConfig{regexes: []string{`\p{N}`, reGPT2}}
	preQwen2       = preConfig{regexes: []string{reQwen2}}
	preQwen35      = preConfig{regexes: []string{reQwen35}}
	// tiktoken looks every split piece up whole before merging; each
	// o200k_harmony token is also what its own merges build, so this only
	// saves work.
	preGPT4o  = preConfig{regexes: []string{reO200k}, ignoreMerges: true}
	preTekken = preConfig{regexes: []string{reTekken}, ignoreMerges: true, addBOS: true}
	// DeepSeek V3's pre-tokenizer (llama.cpp's DEEPSEEK3_LLM): up to three
	// digits, runs of CJK ideographs and kana, then words of letters and
	// marks, punctuation and symbol runs and the whitespace alternatives.
	preDeepseekV3 = preConfig{regexes: []string{
		`\p{N}{1,3}`,
		"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", // 一-龥, hiragana, katakana
		`[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}}
	preFalcon = preConfig{regexes: []string{
		`[\p{P}\$\+<=>\^~\|` + "`" + `]+`,
		reGPT2,
		`[0-9][0-9][0-9]`,
	}}
	preDeepseekCoder = preConfig{regexes: []string{
		"[\r\n]",
		`\s?\p{L}+`,
		`\s?\p{P}+`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}`,
	}}
	preDeepseekLLM = preConfig{regexes: []string{
		"[\r\n]",
		`\s?[A-Za-z` + runeClass(deepseekLetters) + `]+`,
		`\s?[!-/:-~！-／：-～‘-‟　-。]+`,
		`\s+$`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}+`,
	}}
)

// deepseekLetters is the cased-letter class of DeepSeek LLM's pre-tokenizer
// regex, as code point ranges (A-Z and a-z are written in the pattern).
// Several of its characters have singleton canonical decompositions (U+212A
// KELVIN SIGN, U+2126 OHM SIGN, ...), so a literal copy is silently broken by
// any tool that normalizes text; ranges keep it exact.
var deepseekLetters = [][2]rune{
	{0x00B5, 0x00B5},
	{0x00C0, 0x00D6},
	{0x00D8, 0x00F6},
	{0x00F8, 0x01BA},
	{0x01BC, 0x01BF},
	{0x01C4, 0x0293},
	{0x0295, 0x02AF},
	{0x0370, 0x0373},
	{0x0376, 0x0376},
	{0x0377, 0x0377},
	{0x037B, 0x037D},
	{0x037F, 0x037F},
	{0x0386, 0x0386},
	{0x0388, 0x038A},
	{0x038C, 0x038C},
	{0x038E, 0x03A1},
	{0x03A3, 0x03F5},
	{0x03F7, 0x0481},
	{0x048A, 0x052F},
	{0x0531, 0x0556},
	{0x10A0, 0x10C5},
	{0x13A0, 0x13F5},
	{0x13F8, 0x13FD},
	{0x1C90, 0x1CBA},
	{0x1CBD, 0x1CBF},
	{0x1D00, 0x1D2B},
	{0x1D6B, 0x1D77},
	{0x1D79, 0x1D9A},
	{0x1E00, 0x1F15},
	{0x1F18, 0x1F1D},
	{0x1F20, 0x1F45},
	{0x1F48, 0x1F4D},
	{0x1F50, 0x1F57},
	{0x1F59, 0x1F59},
	{0x1F5B, 0x1F5B},
	{0x1F5D, 0x1F5D},
	{0x1F5F, 0x1F7D},
	{0x1F80, 0x1FB4},
	{0x1FB6, 0x1FBC},
	{0x1FBE, 0x1FBE},
	{0x1FC2, 0x1FC4},
	{0x1FC6, 0x1FCC},
	{0x1FD0, 0x1FD3},
	{0x1FD6, 0x1FDB},
	{0x1FE0, 0x1FEC},
	{0x1FF2, 0x1FF4},
	{0x1FF6, 0x1FFC},
	{0x2102, 0x2102},
	{0x2107, 0x2107},
	{0x210A, 0x2113},
	{0x2115, 0x2115},
	{0x2119, 0x211D},
	{0x2124, 0x2124},
	{0x2126, 0x2126},
	{0x2128, 0x2128},
	{0x212A, 0x212D},
	{0x212F, 0x2134},
	{0x2139, 0x2139},
	{0x213C, 0x213F},
	{0x2145, 0x2149},
	{0x214E, 0x214E},
	{0x2183, 0x2183},
	{0x2184, 0x2184},
	{0x2C00, 0x2C7B},
	{0x2C7E, 0x2CE4},
	{0x2CEB, 0x2CEE},
	{0x2CF2, 0x2CF2},
	{0x2CF3, 0x2CF3},
	{0xA640, 0xA66D},
	{0xA680, 0xA69B},
	{0xA722, 0xA76F},
	{0xA771, 0xA787},
	{0xA78B, 0xA78E},
	{0xAB70, 0xABBF},
	{0xFB00, 0xFB06},
	{0xFB13, 0xFB17},
	{0xFF21, 0xFF3A},
	{0xFF41, 0xFF5A},
	{0x10400, 0x1044F},
	{0x104B0, 0x104D3},
	{0x104D8, 0x104FB},
	{0x10C80, 0x10CB2},
	{0x10CC0, 0x10CF2},
	{0x118A0, 0x118DF},
	{0x1E900, 0x1E943},
}

func runeClass(ranges [][2]rune) string {
	var b strings.Builder
	for _, r := range ranges {
		b.WriteRune(r[0])
		if r[1] != r[0] {
			b.WriteByte('-')
			b.WriteRune(r[1])
		}
	}
	return b.String()
}

// preTypes maps tokenizer.ggml.pre to a configuration, following the name
// groups in llama.cpp's llama_vocab::impl::load.
var preTypes = map[string]preConfig{
	"default": preDefault,

	"llama3": preLlama3, "llama-v3": preLlama3, "llama-bpe": preLlama3, "falcon3": preLlama3,
	"falcon-h1": preLlama3, "pixtral": preLlama3, "midm-2.0": preLlama3, "lfm2": preLlama3,
	"jina-v5-nano": preLlama3,
	"dbrx":         preLlama3Plain, "smaug-bpe": preLlama3Plain,
	"glm4": preChatGLM4, "chatglm-bpe": preChatGLM4,

	"gpt-2": preGPT2, "phi-2": preGPT2, "jina-es": preGPT2, "jina-de": preGPT2, "gigachat": preGPT2,
	"jina-v2-es": preGPT2, "jina-v2-de": preGPT2, "a.x-4.0": preGPT2, "mellum": preGPT2,
	"modern-bert": preGPT2, "mpt": preGPT2, "olmo": preGPT2, "jais": preGPT2, "trillion": preGPT2,
	"granite-docling": preGPT2, "exaone4": preGPT2,

	"starcoder": preStarcoder, "refact": preStarcoder, "command-r": preStarcoder, "smollm": preStarcoder,
	"codeshell": preStarcoder, "exaone": preStarcoder, "minerva-7b": preStarcoder, "mellum2": preStarcoder,

	"qwen2": preQwen2, "deepseek-r1-qwen": preQwen2, "kormo": preQwen2, "f2llmv2": preQwen2,
	"megrez": preQwen2, "stablelm2": preQwen2, "hunyuan": preQwen2, "solar-open": preQwen2,
	"grok-2": preQwen2,
	"qwen35": preQwen35,

	"gpt-4o": preGPT4o,
	"tekken": preTekken,

	"deepseek-v3": preDeepseekV3,

	"falcon":         preFalcon,
	"deepseek-coder": preDeepseekCoder,
	"deepseek-llm":   preDeepseekLLM,
}

func supportedPre() string {
	names := make([]string, 0, len(preTypes))
	for n := range preTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func newPreTokenizer(name string, regexes []string) (*preTokenizer, error) {
	p := &preTokenizer{name: name}
	for _, expr := range regexes {
		s, err := newSplitStep(expr)
		if err != nil {
			return nil, fmt.Errorf("pre-tokenizer %q: regex %q: %w", name, expr, err)
		}
		p.steps = append(p.steps, s)
	}
	return p, nil
}

func newSplitStep(expr string) (splitStep, error) {
	switch expr {
	case reGPT2:
		return customGPT2{}, nil
	case reLlama3:
		return customLlama3{maxDigits: 3}, nil
	case reQwen2:
		return customLlama3{maxDigits: 1}, nil
	case reQwen35:
		return customLlama3{maxDigits: 1, marks: true}, nil
	case reO200k:
		return customO200k{}, nil
	case reTekken:
		return customO200k{tekken: true}, nil
	}
	return compileRegexStep(expr, false)
}

// splitText holds one text being pre-tokenized, with the alternative views
// the regex engine needs built on first use.
type splitText struct {
	cpts []rune

	views [2]*textView // [collapsed, wide]
}

// textView is the text as the regex sees it: as runes for regexp2, and as a
// string for Go's regexp with a map from byte offset to code point index.
type textView struct {
	runes    []rune
	str      string
	byteAt   []int32 // byte offset of code point i; len(runes)+1 entries
	cptAtOff []int32 // code point index starting at each byte offset
}

// Category stand-ins of llama.cpp's collapsed text: every non-ASCII code point
// becomes one character naming its class, so byte regexes can test \p{..}.
const (
	collOther  = 0xD0
	collNumber = 0xD1
	collLetter = 0xD2
	collPunct  = 0xD3
	collAccent = 0xD4
	collSymbol = 0xD5
)

func (t *splitText) view(collapsed bool) *textView {
	i := 1
	if collapsed {
		i = 0
	}
	if t.views[i] != nil {
		return t.views[i]
	}
	v := &textView{runes: make([]rune, len(t.cpts)), byteAt: make([]int32, len(t.cpts)+1)}
	for j, c := range t.cpts {
		if c >= 0x80 {
			f := cptFlags(c)
			switch {
			case f&cSpace != 0:
				// std::regex's \s only knows ASCII; llama.cpp substitutes VT.
				c = 0x0B
			case !collapsed:
			case f&cNumber != 0:
				c = collNumber
			case f&cLetter != 0:
				c = collLetter
			case f&cPunct != 0:
				c = collPunct
			case f&cAccent != 0:
				c = collAccent
			case f&cSymbol != 0:
				c = collSymbol
			default:
				c = collOther
			}
		}
		v.runes[j] = c
	}
	var b []byte
	for j, c := range v.runes {
		v.byteAt[j] = int32(len(b))
		if c >= 0xD800 && c < 0xE000 {
			// Go strings cannot hold surrogates; none of the supported
			// patterns can match one, and U+FFFD is not matched either.
			c = 0xFFFD
		}
		b = appendCpt(b, c)
	}
	v.byteAt[len(v.runes)] = int32(len(b))
	v.str = string(b)
	v.cptAtOff = make([]int32, len(b)+1)
	for j := range v.runes {
		v.cptAtOff[v.byteAt[j]] = int32(j)
	}
	v.cptAtOff[len(b)] = int32(len(v.runes))
	t.views[i] = v
	return v
}

// regexStep runs one llama.cpp pre-tokenizer regex through a Go engine.
// Patterns with look-around need regexp2; the rest use Go's linear-time
// regexp, which picks the same leftmost-first matches as std::regex does.
type regexStep struct {
	collapsed bool
	re        *regexp.Regexp
	re2       *regexp2.Regexp
}

func compileRegexStep(expr string, forceRegexp2 bool) (*regexStep, error) {
	collapsed := usesCategories(expr)
	useRE2 := forceRegexp2 || strings.Contains(expr, "(?=") || strings.Contains(expr, "(?!")
	pat, err := translateRegex(expr, collapsed, useRE2)
	if err != nil {
		return nil, err
	}
	s := &regexStep{collapsed: collapsed}
	if useRE2 {
		s.re2, err = regexp2.Compile(pat, regexp2.None)
	} else {
		s.re, err = regexp.Compile(pat)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

var categoryNames = []string{`\p{N}`, `\p{L}`, `\p{P}`, `\p{M}`, `\p{S}`, `\p{Lu}`, `\p{Ll}`, `\p{Lt}`, `\p{Lm}`, `\p{Lo}`}

func usesCategories(expr string) bool {
	for _, c := range categoryNames {
		if strings.Contains(expr, c) {
			return true
		}
	}
	return false
}

// categoryClass is llama.cpp's k_ucat_cpt + k_ucat_map: the stand-in
// character plus the ASCII members of the category. Note that ASCII '~' is in
// neither \p{P} nor \p{S} there, although Unicode files it under Sm.
var categoryClass = map[string]string{
	`\p{N}`:  string(rune(collNumber)) + `0-9`,
	`\p{L}`:  string(rune(collLetter)) + `A-Za-z`,
	`\p{Lu}`: string(rune(collLetter)) + `A-Za-z`,
	`\p{Ll}`: string(rune(collLetter)) + `A-Za-z`,
	`\p{Lt}`: string(rune(collLetter)) + `A-Za-z`,
	`\p{Lm}`: string(rune(collLetter)) + `A-Za-z`,
	`\p{Lo}`: string(rune(collLetter)) + `A-Za-z`,
	`\p{P}`:  string(rune(collPunct)) + `!-#%-*,-/:-;?-@\[-\]_\{\}`,
	`\p{M}`:  string(rune(collAccent)),
	`\p{S}`:  string(rune(collSymbol)) + `\$\+<->\^` + "`" + `\|`,
}

const asciiSpaceClass = `\t\n\v\f\r `

// translateRegex rewrites a llama.cpp (ECMAScript) pre-tokenizer regex for
// Go's engines: \p{..} becomes the collapsed-text class as llama.cpp builds
// it, and \s/\S become explicit ASCII classes because neither Go engine's \s
// is std::regex's [ \t\n\v\f\r]. For regexp2 a bare $ becomes \z, since
// .NET's $ also matches before a final newline and ECMAScript's does not.
func translateRegex(expr string, collapsed, forRE2 bool) (string, error) {
	var out strings.Builder
	inside := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '[' && !inside:
			inside = true
			out.WriteByte(c)
		case c == ']' && inside:
			inside = false
			out.WriteByte(c)
		case c == '$' && !inside && forRE2:
			out.WriteString(`\z`)
		case c == '\\' && i+1 < len(expr):
			n := expr[i+1]
			if n == 'p' && collapsed {
				end := strings.IndexByte(expr[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("unterminated \\p{ at %d", i)
				}
				cls, ok := categoryClass[expr[i:i+end+1]]
				if !ok {
					return "", fmt.Errorf("unsupported category %s", expr[i:i+end+1])
				}
				if inside {
					out.WriteString(cls)
				} else {
					out.WriteString("[" + cls + "]")
				}
				i += end
				continue
			}
			switch {
			case n == 's' && inside:
				out.WriteString(asciiSpaceClass)
			case n == 's':
				out.WriteString("[" + asciiSpaceClass + "]")
			case n == 'S' && !inside:
				out.WriteString("[^" + asciiSpaceClass + "]")
			case n == 'S' || n == 'p' || n == 'd' || n == 'w' || n == 'b':
				return "", fmt.Errorf("unsupported escape \\%c", n)
			default:
				out.WriteByte(c)
				out.WriteByte(n)
			}
			i++
		default:
			out.WriteByte(c)
		}
	}
	return out.String(), nil
}

func (s *regexStep) split(t *splitText, offsets []int) []int {
	v := t.view(s.collapsed)
	out := make([]int, 0, len(offsets))
	start := 0
	for _, n := range offsets {
		last := 0
		emit := func(ms, me int) {
			if ms > last {
				out = append(out, ms-last)
			}
			out = append(out, me-ms)
			last = me
		}
		if s.re != nil {
			base := v.byteAt[start]
			sub := v.str[base:v.byteAt[start+n]]
			for _, m := range s.re.FindAllStringIndex(sub, -1) {
				ms := int(v.cptAtOff[int(base)+m[0]]) - start
				me := int(v.cptAtOff[int(base)+m[1]]) - start
				emit(ms, me)
			}
		} else {
			m, _ := s.re2.FindRunesMatch(v.runes[start : start+n])
			for m != nil {
				emit(m.Index, m.Index+m.Length)
				m, _ = s.re2.FindNextMatch(m)
			}
		}
		if last < n {
			out = append(out, n-last)
		}
		start += n
	}
	return out
}

// fragment walks one fragment [ini, end) of the code points the way
// llama.cpp's custom splitters do: positions outside it read as "no
// character", and tokens are emitted as lengths.
type fragment struct {
	cpts     []rune
	ini, end int
	prev     int
	out      []int
}

const outOfRange = -1

func (f *fragment) cpt(pos int) rune {
	if pos >= f.ini && pos < f.end {
		return f.cpts[pos]
	}
	return outOfRange
}

func (f *fragment) flags(pos int) uint8 {
	if pos >= f.ini && pos < f.end {
		return cptFlags(f.cpts[pos])
	}
	return 0
}

// spaceRun is where the whitespace alternatives of the llama3 and gpt-4o
// patterns end a piece starting at pos (or a lone other character's end):
// \s*[\r\n]+ at the run's last line break; \s+(?!\S) leaves the last
// space to the next word unless the text ends; \s+ takes a lone space.
func (f *fragment) spaceRun(pos int) int {
	ws, lastRN := 0, 0
	for f.flags(pos+ws)&cSpace != 0 {
		if c2 := f.cpt(pos + ws); c2 == '\r' || c2 == '\n' {
			lastRN = pos + ws + 1
		}
		ws++
	}
	switch {
	case lastRN > 0:
		return lastRN
	case ws > 1 && f.cpt(pos+ws) != outOfRange:
		return pos + ws - 1
	case ws > 0:
		return pos + ws
	}
	return pos + 1
}

func (f *fragment) add(end int) int {
	n := end - f.prev
	if n > 0 {
		f.out = append(f.out, n)
	}
	f.prev = end
	return n
}

func asciiLower(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// customGPT2 is llama.cpp's unicode_regex_split_custom_gpt2, a hand-written
// matcher for reGPT2 (which Go's regexp cannot run because of the look-ahead).
type customGPT2 struct{}

func (customGPT2) split(t *splitText, offsets []int) []int {
	out := make([]int, 0, len(offsets))
	start := 0
	for _, n := range offsets {
		f := fragment{cpts: t.cpts, ini: start, end: start + n, prev: start, out: out}
		start += n
		for pos := f.ini; pos < f.end; {
			c := f.cpt(pos)
			fl := f.flags(pos)

			if c == '\'' && pos+1 < f.end {
				c1 := f.cpt(pos + 1)
				if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
					pos += f.add(pos + 2)
					continue
				}
				if pos+2 < f.end {
					c2 := f.cpt(pos + 2)
					if (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l') {
						pos += f.add(pos + 3)
						continue
					}
				}
			}

			fl2 := fl
			if c == ' ' {
				fl2 = f.flags(pos + 1)
			}
			if fl2&cLetter != 0 {
				if c == ' ' {
					pos++
				}
				for fl2&cLetter != 0 {
					pos++
					fl2 = f.flags(pos)
				}
				f.add(pos)
				continue
			}
			if fl2&cNumber != 0 {
				if c == ' ' {
					pos++
				}
				for fl2&cNumber != 0 {
					pos++
					fl2 = f.flags(pos)
				}
				f.add(pos)
				continue
			}
			if fl2&(cSpace|cLetter|cNumber) == 0 && fl2 != 0 {
				if c == ' ' {
					pos++
				}
				for fl2&(cSpace|cLetter|cNumber) == 0 && fl2 != 0 {
					pos++
					fl2 = f.flags(pos)
				}
				f.add(pos)
				continue
			}

			ws := 0
			for f.flags(pos+ws)&cSpace != 0 {
				ws++
			}
			if ws > 1 && f.cpt(pos+ws) != outOfRange {
				pos += ws - 1
				f.add(pos)
				continue
			}
			if ws > 0 {
				pos += ws
				f.add(pos)
				continue
			}
			pos++
			f.add(pos)
		}
		out = f.out
	}
	return out
}

// customLlama3 is llama.cpp's unicode_regex_split_custom_llama3 (maxDigits 3)
// and, with maxDigits 1, its qwen2 variant, which differs only in \p{N}; with
// marks set as well, qwen35's, where combining marks join letter runs and
// leave punctuation runs.
type customLlama3 struct {
	maxDigits int
	marks     bool
}

func (s customLlama3) split(t *splitText, offsets []int) []int {
	letter, notPunct := cLetter, cSpace|cLetter|cNumber
	if s.marks {
		letter, notPunct = cLetter|cAccent, notPunct|cAccent
	}
	out := make([]int, 0, len(offsets))
	start := 0
	for _, n := range offsets {
		f := fragment{cpts: t.cpts, ini: start, end: start + n, prev: start, out: out}
		start += n
		for pos := f.ini; pos < f.end; {
			c := f.cpt(pos)
			fl := f.flags(pos)

			if c == '\'' && pos+1 < f.end {
				c1 := asciiLower(f.cpt(pos + 1))
				if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
					pos += f.add(pos + 2)
					continue
				}
				if pos+2 < f.end {
					c2 := asciiLower(f.cpt(pos + 2))
					if (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l') {
						pos += f.add(pos + 3)
						continue
					}
				}
			}

			// [^\r\n\p{L}\p{N}]?\p{L}+ (qwen35: [\p{L}\p{M}]+)
			if !(c == '\r' || c == '\n' || fl&cNumber != 0) {
				if fl&letter != 0 || f.flags(pos+1)&letter != 0 {
					pos++
					for f.flags(pos)&letter != 0 {
						pos++
					}
					f.add(pos)
					continue
				}
			}

			// \p{N}{1,maxDigits}
			if fl&cNumber != 0 {
				ini := pos
				for f.flags(pos)&cNumber != 0 {
					pos++
					if pos-ini >= s.maxDigits {
						f.add(pos)
						ini = pos
					}
				}
				f.add(pos)
				continue
			}

			// ' ?[^\s\p{L}\p{N}]+[\r\n]*'; the guard reads the current
			// code point's flags, as llama.cpp's does.
			fl2 := fl
			if c == ' ' {
				fl2 = f.flags(pos + 1)
			}
			if fl2&notPunct == 0 && fl != 0 {
				if c == ' ' {
					pos++
				}
				for fl2&notPunct == 0 && fl2 != 0 {
					pos++
					fl2 = f.flags(pos)
				}
				for c2 := f.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = f.cpt(pos) {
					pos++
				}
				f.add(pos)
				continue
			}

			pos = f.spaceRun(pos)
			f.add(pos)
		}
		out = f.out
	}
	return out
}

// customO200k matches reO200k with the leftmost-first, backtracking
// semantics of tiktoken's regex engine, without backtracking: each code point
// is looked at a bounded number of times, so splitting stays linear.
//
// The letter alternatives are P?U*L+C? and P?U+L*C?, where P is
// [^\r\n\p{L}\p{N}], U the "upper" class [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// L the "lower" class [\p{Ll}\p{Lm}\p{Lo}\p{M}] and C the contractions.
// Lm, Lo and marks are in both classes, so a backtracking U* gives back
// characters to L+: U* takes the whole run of U, and L+ starts at the first
// character after it if that one is L, or else at the last L inside the run
// (where it then matches that one character only).
//
// With tekken set it matches reTekken instead: no contractions, and \p{N}
// one digit at a time.
type customO200k struct{ tekken bool }

func (o customO200k) split(t *splitText, offsets []int) []int {
	digits := 3
	if o.tekken {
		digits = 1
	}
	out := make([]int, 0, len(offsets))
	start := 0
	for _, n := range offsets {
		f := fragment{cpts: t.cpts, ini: start, end: start + n, prev: start, out: out}
		start += n
		for pos := f.ini; pos < f.end; {
			c := f.cpt(pos)
			fl := f.flags(pos)

			// The two letter alternatives, first with the prefix P taken
			// (when the current character is one), then without it.
			starts := [2]int{-1, pos}
			if c != '\r' && c != '\n' && fl&(cLetter|cNumber) == 0 {
				starts[0] = pos + 1
			}
			var runs [2]o200kRun
			end := -1
			for i, s := range starts {
				if s < 0 {
					continue
				}
				runs[i] = f.o200kRun(s)
				if e := runs[i].lowerEnd(&f, s); e >= 0 {
					end = e
					break
				}
			}
			if end < 0 {
				for i, s := range starts {
					if s >= 0 && runs[i].upper > 0 {
						end = f.lowerSpan(s + runs[i].upper)
						break
					}
				}
			}
			if end >= 0 {
				pos = end
				if !o.tekken {
					pos = f.contraction(end)
				}
				f.add(pos)
				continue
			}

			// \p{N}{1,3} (tekken: \p{N})
			if fl&cNumber != 0 {
				for i := 0; i < digits && f.flags(pos)&cNumber != 0; i++ {
					pos++
				}
				f.add(pos)
				continue
			}

			// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
			other := func(p int) bool {
				g := f.flags(p)
				return g != 0 && g&(cSpace|cLetter|cNumber) == 0
			}
			if c == ' ' && other(pos+1) || other(pos) {
				if c == ' ' {
					pos++
				}
				for other(pos) {
					pos++
				}
				for c2 := f.cpt(pos); c2 == '\r' || c2 == '\n' || c2 == '/'; c2 = f.cpt(pos) {
					pos++
				}
				f.add(pos)
				continue
			}

			pos = f.spaceRun(pos)
			f.add(pos)
		}
		out = f.out
	}
	return out
}

// o200kRun describes the run of "upper"-class characters at some position:
// its length and the offset of the last "lower"-class one in it (-1: none).
type o200kRun struct {
	upper, lastLower int
}

func (f *fragment) o200kRun(s int) o200kRun {
	r := o200kRun{lastLower: -1}
	for {
		cc := f.caseClass(s + r.upper)
		if cc&caseUpper == 0 {
			return r
		}
		if cc&caseLower != 0 {
			r.lastLower = r.upper
		}
		r.upper++
	}
}

// lowerEnd is where P?U*L+ ends when U* starts at s with run r, or -1.
func (r o200kRun) lowerEnd(f *fragment, s int) int {
	if f.caseClass(s+r.upper)&caseLower != 0 {
		return f.lowerSpan(s + r.upper)
	}
	if r.lastLower >= 0 {
		return s + r.lastLower + 1
	}
	return -1
}

// lowerSpan is the end of the run of "lower"-class characters at pos.
func (f *fragment) lowerSpan(pos int) int {
	for f.caseClass(pos)&caseLower != 0 {
		pos++
	}
	return pos
}

func (f *fragment) caseClass(pos int) uint8 {
	if pos >= f.ini && pos < f.end {
		return caseClass(f.cpts[pos])
	}
	return 0
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos and returns where
// it ends (pos if it does not match). Case folding is Unicode's, as in
// tiktoken's engine, so U+017F LATIN SMALL LETTER LONG S counts as an s.
func (f *fragment) contraction(pos int) int {
	if f.cpt(pos) != '\'' {
		return pos
	}
	c1 := asciiLower(f.cpt(pos + 1))
	if c1 == 0x17F {
		c1 = 's'
	}
	switch c1 {
	case 's', 't', 'm', 'd':
		return pos + 2
	case 'r', 'v', 'l':
		c2 := asciiLower(f.cpt(pos + 2))
		if c1 == 'r' && c2 == 'e' || c1 == 'v' && c2 == 'e' || c1 == 'l' && c2 == 'l' {
			return pos + 3
		}
	}
	return pos
}

// words pre-tokenizes text and returns the words byte-level encoded, ready
// for BPE merging, as llama.cpp's unicode_regex_split does.
func (p *preTokenizer) words(text string) []string {
	t := &splitText{cpts: decodeCpts(text, make([]rune, 0, len(text)))}
	offsets := []int{len(t.cpts)}
	for _, s := range p.steps {
		offsets = s.split(t, offsets)
	}
	words := make([]string, 0, len(offsets))
	var raw, enc []byte
	start := 0
	for _, n := range offsets {
		raw = raw[:0]
		for _, c := range t.cpts[start : start+n] {
			raw = appendCpt(raw, c)
		}
		start += n
		enc = enc[:0]
		for _, b := range raw {
			enc = appendCpt(enc, byteToRune[b])
		}
		words = append(words, string(enc))
	}
	return words
}
