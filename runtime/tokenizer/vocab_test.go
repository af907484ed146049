package tokenizer

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// vocabNames are the vocabularies every test runs on. The first four are in
// the repository's testdata; gptoss (o200k_harmony, 13 MB) is only in the
// shared data, so tests run it as a subtest that skips without it.
var vocabNames = []string{"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "gptoss", "llama3", "qwen3", "gemma3"}

var (
	loadMu sync.Mutex
	loaded = map[string]*Tokenizer{}
)

// load opens a shared vocabulary once per test binary; the files take a
// moment to parse and most tests want several of them.
func load(t testing.TB, name string) *Tokenizer {
	t.Helper()
	path := testenv.Shared(t, "vocab/ggml-vocab-"+name+".gguf")
	loadMu.Lock()
	defer loadMu.Unlock()
	if tk := loaded[name]; tk != nil {
		return tk
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	loaded[name] = tk
	return tk
}

type vocabCase struct {
	text string
	want []int32
}

// readCases splits .inp/.out exactly as llama.cpp's test-tokenizer-0 does:
// inputs are separated by "\n__ggml_vocab_test__\n" (so a case keeps its own
// leading and trailing newlines), outputs are one line of ids per case.
func readCases(t *testing.T, name string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(testenv.Shared(t, "vocab/ggml-vocab-"+name+".gguf.inp"))
	if err != nil {
		t.Fatal(err)
	}
	outb, err := os.ReadFile(testenv.Shared(t, "vocab/ggml-vocab-"+name+".gguf.out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	raw := string(inp)
	var ins []string
	for pos := 0; pos < len(raw); {
		next := strings.Index(raw[pos:], sep)
		if next < 0 {
			ins = append(ins, raw[pos:])
			break
		}
		ins = append(ins, raw[pos:pos+next])
		pos += next + len(sep)
	}
	outs := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
	if len(ins) != len(outs) {
		t.Fatalf("%s: %d inputs but %d outputs", name, len(ins), len(outs))
	}
	cases := make([]vocabCase, len(ins))
	for i := range ins {
		cases[i].text = ins[i]
		for _, f := range strings.Fields(outs[i]) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", name, i+1, err)
			}
			cases[i].want = append(cases[i].want, int32(v))
		}
	}
	return cases
}

func TestVocabVectors(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			cases := readCases(t, name)
			pass := 0
			for i, c := range cases {
				// test-tokenizer-0 tokenizes with add_special=false,
				// parse_special=false.
				got := tk.Encode(c.text, false, false)
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("case %d %q:\n got  %v\n want %v", i, c.text, got, c.want)
					continue
				}
				pass++
			}
			t.Logf("%s: %d/%d cases pass", name, pass, len(cases))
		})
	}
}

// TestQwen35OnQwen3Vectors: the qwen35 pre-tokenizer differs from qwen2's
// only where text has combining marks, so on the Qwen3 vocabulary's
// llama.cpp vectors without any it must give llama.cpp's ids.
func TestQwen35OnQwen3Vectors(t *testing.T) {
	f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if tk.pre.name != "qwen2" {
		t.Fatalf("the qwen3 vocabulary names pre-tokenizer %q, want qwen2", tk.pre.name)
	}
	if tk.pre, err = newPreTokenizer("qwen35", preQwen35.regexes); err != nil {
		t.Fatal(err)
	}
	same, marked := 0, 0
	for i, c := range readCases(t, "qwen3") {
		if strings.ContainsFunc(c.text, func(r rune) bool { return cptFlags(r)&cAccent != 0 }) {
			marked++ // TestSplitKnown and TestCustomSplittersMatchRegex cover these
			continue
		}
		got := tk.Encode(c.text, false, false)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("case %d %q:\n got  %v\n want %v", i, c.text, got, c.want)
			continue
		}
		same++
	}
	if same < 40 || marked == 0 {
		t.Errorf("%d cases without marks compared, %d with marks; the vectors changed", same, marked)
	}
	t.Logf("qwen35 on the qwen3 vectors: %d cases without marks equal llama.cpp's qwen2 ids; %d have marks", same, marked)
}
