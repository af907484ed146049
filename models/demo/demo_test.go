package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/gguf"
)

func TestPathInWritesOnceAndRepairs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "demo")
	p, err := PathIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(data, Bytes()) {
		t.Fatalf("written file differs from the embedded model (err %v)", err)
	}
	st1, _ := os.Stat(p)

	// A second call reuses the file rather than writing it again.
	p2, err := PathIn(dir)
	if err != nil || p2 != p {
		t.Fatalf("second PathIn = %q, %v; want %q", p2, err, p)
	}
	st2, _ := os.Stat(p)
	if !os.SameFile(st1, st2) {
		t.Error("second PathIn replaced an intact file")
	}

	// A damaged copy (same size, one byte off) is replaced.
	bad := bytes.Clone(Bytes())
	bad[len(bad)/2] ^= 0xff
	if err := os.WriteFile(p, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PathIn(dir); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); !bytes.Equal(data, Bytes()) {
		t.Error("a damaged copy was kept")
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only the model", len(entries))
	}
}

func TestPathFallsBackWhenCacheIsUnwritable(t *testing.T) {
	// A cache "directory" that is a file cannot be written into, even by
	// root (chmod would not stop root).
	notDir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", notDir)
	t.Setenv("TMPDIR", t.TempDir())
	p, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(os.TempDir(), p); err != nil || filepath.IsAbs(rel) || rel[0] == '.' {
		t.Errorf("Path() = %q, want a file under %s", p, os.TempDir())
	}

	// With no usable place at all the error says where it tried.
	t.Setenv("TMPDIR", notDir)
	if _, err := Path(); err == nil {
		t.Error("Path() succeeded with neither the cache nor the temp dir writable")
	} else if !strings.Contains(err.Error(), notDir) {
		t.Errorf("error %q does not name %s", err, notDir)
	}
}

func TestPathUsesCacheHome(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	p, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "vkchat", "demo"); filepath.Dir(p) != want {
		t.Errorf("Path() = %q, want it in %s", p, want)
	}
}

// The embedded bytes must be a model the loader accepts: a damaged embed
// would only show when a user without network needs it.
func TestEmbeddedModelIsValidGGUF(t *testing.T) {
	f, err := gguf.Parse(FileName, Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if arch, _, _ := f.String("general.architecture"); arch != "llama" {
		t.Errorf("general.architecture = %q, want llama", arch)
	}
	if Sum() != "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d" {
		t.Errorf("embedded model sha256 %s is not tinyllamas' stories260K (see NOTICE)", Sum())
	}
}

func TestIsRef(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{{"demo", true}, {"Demo", true}, {" demo ", true}, {"./demo", false}, {"demo.gguf", false}, {"", false}} {
		if got := IsRef(c.in); got != c.want {
			t.Errorf("IsRef(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
