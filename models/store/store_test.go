package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// writeModel writes a small GGUF at dir/rel: a 256x8 matrix of typ plus an
// F32 vector of 32, with general.file_type when ft >= 0.
func writeModel(t *testing.T, dir, rel string, typ ggml.Type, ft int) string {
	t.Helper()
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	if ft >= 0 {
		w.Set("general.file_type", uint32(ft))
	}
	rb, _ := typ.RowBytes(256) // one K-quant super-block per row
	if err := w.AddTensor("blk.0.attn_q.weight", typ, []uint64{256, 8}, make([]byte, rb*8)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("output_norm.weight", ggml.F32, []uint64{32}, make([]byte, 4*32)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDir(t *testing.T) {
	t.Setenv("VKCHAT_MODELS", "/srv/models")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d := Dir(); d != "/srv/models" {
		t.Errorf("with VKCHAT_MODELS: %s", d)
	}
	t.Setenv("VKCHAT_MODELS", "")
	if d := Dir(); d != "/xdg/vkchat/models" {
		t.Errorf("with XDG_CACHE_HOME: %s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if d := Dir(); d != "/home/u/.cache/vkchat/models" {
		t.Errorf("default: %s", d)
	}
}

func TestListAndRemove(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VKCHAT_MODELS", dir)
	if ms, err := List(); err != nil || len(ms) != 0 {
		t.Fatalf("empty store: %v, %v", ms, err)
	}
	if ms, err := ListDir(filepath.Join(dir, "missing")); err != nil || len(ms) != 0 {
		t.Fatalf("missing store: %v, %v", ms, err)
	}
	a := writeModel(t, dir, "org/Repo-GGUF/Repo-Q8_0.gguf", ggml.Q8_0, 7)
	writeModel(t, dir, "org/Repo-GGUF/Repo-Q4_K_M.gguf", ggml.Q4_K, -1) // no file_type: dominant tensor type
	writeModel(t, dir, "loose.gguf", ggml.F16, 1)
	_ = os.WriteFile(filepath.Join(dir, "org/Repo-GGUF/Repo-F16.gguf.partial"), []byte("GGUF"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "broken.gguf"), []byte("<html>"), 0o644)

	ms, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "broken loose org/Repo-GGUF/Repo-Q4_K_M org/Repo-GGUF/Repo-Q8_0" {
		t.Fatalf("names = %s", got)
	}
	q8 := ms[3]
	st, _ := os.Stat(a)
	if q8.Path != a || q8.Arch != "llama" || q8.Quant != "Q8_0" || q8.Params != 256*8+32 || q8.Size != st.Size() || q8.Err != nil {
		t.Errorf("Q8_0 model = %+v", q8)
	}
	if ms[2].Quant != "Q4_K" {
		t.Errorf("dominant type quant = %q, want Q4_K", ms[2].Quant)
	}
	if ms[1].Quant != "F16" || ms[1].Name != "loose" {
		t.Errorf("loose = %+v", ms[1])
	}
	if !errors.Is(ms[0].Err, gguf.ErrFormat) {
		t.Errorf("broken file: Err = %v", ms[0].Err)
	}

	for _, tc := range []struct{ name, want string }{
		{"loose", "loose"},
		{"loose.gguf", "loose"},
		{"org/Repo-GGUF/Repo-Q8", "org/Repo-GGUF/Repo-Q8_0"},
		{"Repo-Q4", "org/Repo-GGUF/Repo-Q4_K_M"},
		{"org/Repo", "error: \"org/Repo\" is ambiguous, it matches 2 models:\n  org/Repo-GGUF/Repo-Q4_K_M\n  org/Repo-GGUF/Repo-Q8_0"},
		{"nope", "error: no model named \"nope\""},
		{"", "error: empty model name"},
	} {
		m, err := Find(ms, tc.name)
		if want, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Find(%q) = %v, %v; want error %q", tc.name, m.Name, err, want)
			}
		} else if err != nil || m.Name != tc.want {
			t.Errorf("Find(%q) = %q, %v; want %q", tc.name, m.Name, err, tc.want)
		}
	}

	if _, err := Remove("org/Repo"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("ambiguous remove: %v", err)
	}
	if m, err := Remove("Repo-Q8"); err != nil || m.Path != a {
		t.Fatalf("Remove = %+v, %v", m, err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("%s still exists", a)
	}
	if _, err := Remove("Repo-Q4"); err != nil {
		t.Fatal(err)
	}
	// The repo's leftover .partial goes with its model only; the directory
	// stays while it holds something.
	if _, err := os.Stat(filepath.Join(dir, "org/Repo-GGUF")); err != nil {
		t.Errorf("directory with a partial download was removed: %v", err)
	}
	_ = os.Remove(filepath.Join(dir, "org/Repo-GGUF/Repo-F16.gguf.partial"))
	writeModel(t, dir, "x/y/z.gguf", ggml.F32, 0)
	if _, err := Remove("x/y/z"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("empty directories were left behind")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the store itself was removed: %v", err)
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	err := WriteTable(&b, []Model{
		{Name: "org/Repo/Repo-Q8_0", Arch: "llama", Params: 134_515_008, Quant: "Q8_0", Size: 144_811_488, Path: "/m/org/Repo/Repo-Q8_0.gguf"},
		{Name: "big", Arch: "qwen2", Params: 7_615_616_512, Quant: "Q4_K_M", Size: 4_683_073_504, Path: "/m/big.gguf"},
		{Name: "bad", Size: 6, Path: "/m/bad.gguf", Err: errors.New("bad.gguf: magic: not a GGUF file")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME                ARCH     PARAMS  QUANT   SIZE       PATH
org/Repo/Repo-Q8_0  llama    135M    Q8_0    138.1 MiB  /m/org/Repo/Repo-Q8_0.gguf
big                 qwen2    7.62B   Q4_K_M  4.4 GiB    /m/big.gguf
bad                 invalid  -       -       6 B        /m/bad.gguf

bad: bad.gguf: magic: not a GGUF file
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "-", 999: "999", 1500: "1.5K", 134_515_008: "135M", 360_000_000: "360M",
		1_711_376_384: "1.71B", 1e9: "1B", 12_400_000_000: "12.4B", 70e9: "70B", 2e12: "2T"} {
		if got := FormatParams(n); got != want {
			t.Errorf("FormatParams(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	if n, ok := FileTypeName(15 | 1024); !ok || n != "Q4_K_M" {
		t.Errorf("guessed file type: %q %v", n, ok)
	}
	if _, ok := FileTypeName(4); ok {
		t.Error("retired file type 4 has a name")
	}
}
