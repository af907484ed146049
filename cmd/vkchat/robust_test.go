package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// End-to-end: the real binary on hostile model files. Each file must make
// `vkchat info` and `vkchat run` exit non-zero within a time bound, with
// exactly one line on stderr that names the key or tensor and the problem,
// no panic or goroutine dump, and no raw control bytes from the file.

// runEscapesName: `vkchat run` prints "model: NAME" with general.name as
// read from the file. Until run.go escapes it (as info.go does with
// printable), the run half of the OSC 52 check is skipped; flip this to
// true with the fix.
const runEscapesName = true

const cmdTimeout = 60 * time.Second

func buildVkchat(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found; cannot build vkchat")
	}
	bin := filepath.Join(t.TempDir(), "vkchat")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func runVkchat(t *testing.T, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "NO_COLOR=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("vkchat %s: still running after %v", strings.Join(args, " "), cmdTimeout)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("vkchat %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// hostileFile is a malformed model and what its one error line must say.
type hostileFile struct {
	name string
	data []byte
	want []string // substrings of the error line
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func gstr(s string) []byte { return append(le64(uint64(len(s))), s...) }
func join(b ...[]byte) []byte {
	return bytes.Join(b, nil)
}
func header(nt, nkv uint64) []byte { return join([]byte("GGUF"), le32(3), le64(nt), le64(nkv)) }

// headerFiles need no model: hand-made headers that are wrong on their own.
func headerFiles() []hostileFile {
	kvStr := func(k, v string) []byte { return join(gstr(k), le32(8), gstr(v)) }
	tensor := func(name string, nd uint32, dims []uint64, typ uint32, off uint64) []byte {
		b := join(gstr(name), le32(nd))
		for _, d := range dims {
			b = append(b, le64(d)...)
		}
		return join(b, le32(typ), le64(off))
	}
	nested := join(gstr("x.nested"), le32(9))
	for i := 0; i < 1000; i++ {
		nested = join(nested, le32(9), le64(1))
	}
	return []hostileFile{
		{"empty", nil, []string{"file is empty"}},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), []string{"magic", "not a GGUF file"}},
		{"version 1", join([]byte("GGUF"), le32(1), le64(0), le64(0)), []string{"version", "unsupported GGUF version 1"}},
		{"tensor count 2^63", header(1<<63, 0), []string{"tensor count", "cannot fit"}},
		{"metadata count 2^64-1", header(0, math.MaxUint64), []string{"metadata count", "cannot fit"}},
		{"key length 2^64-1", join(header(0, 1), le64(math.MaxUint64), make([]byte, 16)), []string{"metadata entry 0 key", "string length"}},
		{"arrays nested 1000 deep", join(header(0, 1), nested), []string{`key "x.nested"[0]`, "nested deeper than"}},
		{"duplicate key", join(header(0, 2), kvStr("general.architecture", "llama"), kvStr("general.architecture", "llama")),
			[]string{`key "general.architecture"`, "duplicate key"}},
		{"alignment 0", join(header(0, 1), gstr("general.alignment"), le32(4), le32(0)), []string{`key "general.alignment"`, "not a power of two"}},
		{"n_dims 2^32-1", join(header(1, 0), tensor("t", math.MaxUint32, nil, 0, 0), make([]byte, 64)), []string{`tensor "t"`, "n_dims 4294967295"}},
		{"OSC 52 in a tensor name", join(header(1, 0), tensor("\x1b]52;c;aGk=\x07", 1, []uint64{4}, 200, 0)),
			[]string{`tensor "\x1b]52;c;aGk=\a"`, "unknown tensor type 200"}},
		{"element count overflow", join(header(1, 0), tensor("t", 2, []uint64{1 << 32, 1 << 32}, 0, 0)), []string{`tensor "t"`, "element count overflows"}},
	}
}

func loadModel(t *testing.T, path string) *ggufspec.Spec {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// The spec's tensor data is a view of the open file.
	t.Cleanup(func() { f.Close() })
	return fromgguf.Spec(f)
}

func encode(t *testing.T, s *ggufspec.Spec) []byte {
	t.Helper()
	b, err := s.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modelFiles break the real stories260K model in one place each.
func modelFiles(t *testing.T, path string) (valid *ggufspec.Spec, files []hostileFile) {
	base := loadModel(t, path)
	good := encode(t, base)
	f, err := gguf.Parse("x", good)
	if err != nil {
		t.Fatal(err)
	}
	embd, _ := f.Tensor("token_embd.weight")
	// Patch token_embd's type in place: its info follows the name.
	typeAt := bytes.Index(good, gstr("token_embd.weight")) + 8 + len("token_embd.weight") + 4 + 8*len(embd.Dims)
	q42 := append([]byte(nil), good...)
	copy(q42[typeAt:], le32(4))
	vocab := int(embd.Dims[1])
	cut := f.DataOffset + embd.Offset + embd.Size/2
	files = []hostileFile{
		{"truncated in token_embd", good[:cut], []string{`tensor "token_embd.weight"`, "runs past the end"}},
		{"truncated in a type tag", good[:bytes.Index(good, gstr("llama.block_count"))+8+len("llama.block_count")+2],
			[]string{`key "llama.block_count" type`, "needs 4 bytes at offset", "only 2 remain"}},
		{"tensor type 4 (Q4_2)", q42, []string{`tensor "token_embd.weight"`, "Q4_2"}},
		{"block_count 10^6", encode(t, base.With(func(m *ggufspec.Spec) { m.Set("llama.block_count", uint32(1e6)) })),
			[]string{`key "llama.block_count"`, "1000000 layers"}},
		{"scores as UINT8", encode(t, base.With(func(m *ggufspec.Spec) { m.Set("tokenizer.ggml.scores", make([]uint8, vocab)) })),
			[]string{`key "tokenizer.ggml.scores"`, "must be an array of float32, found an array of uint8"}},
		{"bos id = vocab size", encode(t, base.With(func(m *ggufspec.Spec) { m.Set("tokenizer.ggml.bos_token_id", uint32(vocab)) })),
			[]string{`key "tokenizer.ggml.bos_token_id"`, "outside the vocabulary"}},
		{"tokens as uint32", encode(t, base.With(func(m *ggufspec.Spec) { m.Set("tokenizer.ggml.tokens", make([]uint32, vocab)) })),
			[]string{`key "tokenizer.ggml.tokens"`, "must be an array of strings"}},
		{"missing blk.3.ffn_up.weight", encode(t, base.With(func(m *ggufspec.Spec) { m.DelTensor("blk.3.ffn_up.weight") })), []string{`tensor "blk.3.ffn_up.weight"`, "missing"}},
		{"vocabulary one token short", encode(t, base.With(func(m *ggufspec.Spec) {
			for i := range m.KVs {
				switch v := m.KVs[i].Value.(type) {
				case []string:
					if m.KVs[i].Key == "tokenizer.ggml.tokens" {
						m.KVs[i].Value = v[:len(v)-1]
					}
				case []float32:
					m.KVs[i].Value = v[:len(v)-1]
				case []int32:
					m.KVs[i].Value = v[:len(v)-1]
				}
			}
		})), []string{`tensor "token_embd.weight"`, fmt.Sprintf("has %d rows but the vocabulary", vocab)}},
		{"output.weight transposed", encode(t, base.With(func(m *ggufspec.Spec) {
			d := m.Tensor("output.weight").Dims
			d[0], d[1] = d[1], d[0]
		})), []string{`tensor "output.weight"`, "shape"}},
		{"architecture with escape bytes", encode(t, base.With(func(m *ggufspec.Spec) { m.Set("general.architecture", "\x1b]52;c;aGk=\x07\x1bc") })),
			[]string{`key "general.architecture"`, `"\x1b]52;c;aGk=\a\x1bc" is not supported`}},
	}
	return base, files
}

func TestHostileModelFiles(t *testing.T) {
	bin := buildVkchat(t)
	dir := t.TempDir()
	files := headerFiles()
	var base *ggufspec.Spec
	if testenv.Fixture("models/stories260K.gguf") != "" {
		var more []hostileFile
		base, more = modelFiles(t, testenv.Model(t, "stories260K.gguf"))
		files = append(files, more...)
	} else {
		t.Log("stories260K.gguf not found: header-level files only")
	}
	for i, h := range files {
		path := filepath.Join(dir, fmt.Sprintf("hostile-%02d.gguf", i))
		if err := os.WriteFile(path, h.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"info", path}, {"run", "--model", path, "--prompt", "hi", "-n", "1"}} {
			t.Run(h.name+"/"+args[0], func(t *testing.T) {
				r := runVkchat(t, bin, args...)
				checkOneErrorLine(t, r, "vkchat "+args[0]+": ", h.want)
			})
		}
	}
	// Not model files at all: a FIFO (opening one for reading blocks until
	// a writer appears) and a directory.
	fifo := filepath.Join(dir, "fifo.gguf")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		for _, p := range []struct{ path, want string }{{fifo, "not a regular file"}, {dir, "is a directory"}} {
			for _, args := range [][]string{{"info", p.path}, {"run", "--model", p.path, "--prompt", "hi", "-n", "1"}} {
				t.Run(p.want+"/"+args[0], func(t *testing.T) {
					checkOneErrorLine(t, runVkchat(t, bin, args...), "vkchat "+args[0]+": ", []string{p.want})
				})
			}
		}
	}
	if base == nil {
		return
	}
	// A valid model whose name carries an OSC 52 clipboard write, a
	// terminal reset and an 8-bit CSI must load, and the name must reach
	// the screen escaped.
	const evil = "evil\x1b]52;c;SGVsbG8=\x07\x1bc\u009b31m"
	path := filepath.Join(dir, "osc52-name.gguf")
	if err := os.WriteFile(path, encode(t, base.With(func(m *ggufspec.Spec) { m.Set("general.name", evil) })), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("OSC 52 in general.name/info", func(t *testing.T) {
		r := runVkchat(t, bin, "info", path)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		checkNoControl(t, r)
		if !strings.Contains(r.stdout, `evil\x1b]52;c;SGVsbG8=\x07\x1bc\x9b31m`) {
			t.Errorf("name not shown escaped:\n%s", r.stdout)
		}
	})
	t.Run("OSC 52 in general.name/run", func(t *testing.T) {
		r := runVkchat(t, bin, "run", "--model", path, "--prompt", "hi", "-n", "1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !runEscapesName {
			if strings.ContainsAny(r.stderr, "\x1b\x07") {
				t.Skip("BUG, not in this test's files: run.go prints general.name raw in its \"model:\" line; escape it with printable and set runEscapesName")
			}
			t.Log("run now escapes general.name: set runEscapesName = true")
		}
		checkNoControl(t, r)
	})
}

// checkOneErrorLine: non-zero exit, stderr exactly one line carrying every
// wanted substring, nothing that looks like a crash, no raw control bytes.
func checkOneErrorLine(t *testing.T, r result, prefix string, want []string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("exit status 0; stdout:\n%s", r.stdout)
	}
	all := r.stdout + r.stderr
	if strings.Contains(all, "panic") || strings.Contains(all, "goroutine") {
		t.Fatalf("crash output:\n%s", all)
	}
	checkNoControl(t, r)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("want exactly one error line on stderr, got %d:\n%s", len(lines), r.stderr)
	}
	line := lines[0]
	if !strings.HasPrefix(line, prefix) {
		t.Errorf("error line %q does not start with %q", line, prefix)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("error line %q\n  does not contain %q", line, w)
		}
	}
	t.Logf("%s (%v)", line, r.elapsed.Round(time.Millisecond))
}

func checkNoControl(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{r.stdout, r.stderr} {
		for _, c := range s {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c < 0xa0) {
				t.Fatalf("raw control character %U reached the terminal:\n%q", c, s)
			}
		}
	}
}
