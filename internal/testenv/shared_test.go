package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFixtureOrder(t *testing.T) {
	root, shared := t.TempDir(), t.TempDir()
	write := func(dir, rel string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, "testdata/reference/both.json")
	write(shared, "reference/both.json")
	write(shared, "reference/shared-only.json")
	write(root, "testdata/vocab/repo-only.gguf")
	write(root, "models/demo/stories260K.gguf")
	write(shared, "models/stories260K.gguf")

	cases := []struct {
		name, shared, rel, want string
	}{
		{"file in both: the repository's", shared, "reference/both.json", filepath.Join(root, "testdata/reference/both.json")},
		{"file only in shared", shared, "reference/shared-only.json", filepath.Join(shared, "reference/shared-only.json")},
		{"file only in the repository", shared, "vocab/repo-only.gguf", filepath.Join(root, "testdata/vocab/repo-only.gguf")},
		{"directory in both: shared holds the full set", shared, "reference", filepath.Join(shared, "reference")},
		{"directory without shared data: the repository's subset", "", "reference", filepath.Join(root, "testdata/reference")},
		{"the demo model is the one repository copy", shared, "models/stories260K.gguf", filepath.Join(root, "models/demo/stories260K.gguf")},
		{"missing everywhere", shared, "vocab/ggml-vocab-llama3.gguf", ""},
		{"missing without shared data", "", "reference/shared-only.json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fixtureIn(root, c.shared, c.rel); got != c.want {
				t.Errorf("fixtureIn(%q) = %q, want %q", c.rel, got, c.want)
			}
		})
	}
}

// TestRepoFixtures checks that the fixtures a plain clone relies on are
// in the repository, so a lost file shows here rather than as skips.
func TestRepoFixtures(t *testing.T) {
	root := RepoDir()
	for _, rel := range []string{
		"models/stories260K.gguf",
		"reference/stories260K.p1.json", "reference/stories260K.p4.json",
		"vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-phi-3.gguf.inp",
		"vocab/ggml-vocab-gpt-2.gguf.out", "vocab/ggml-vocab-deepseek-coder.gguf",
		"templates/cases.json", "templates/micro_cases.json",
	} {
		if p := fixtureIn(root, "", rel); p == "" {
			t.Errorf("%s is not in the repository", rel)
		}
	}
}

func TestSharedDirOverride(t *testing.T) {
	t.Setenv("VKCHAT_SHARED", filepath.Join(t.TempDir(), "nonexistent"))
	if d := SharedDir(); d != "" {
		t.Errorf("SharedDir() = %q with VKCHAT_SHARED naming a missing directory, want \"\"", d)
	}
	d := t.TempDir()
	t.Setenv("VKCHAT_SHARED", d)
	if got := SharedDir(); got != d {
		t.Errorf("SharedDir() = %q, want %q", got, d)
	}
}
