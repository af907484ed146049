// Package testenv finds the project's test data so every test locates it
// the same way. The core fixtures — stories260K.gguf with its llama.cpp
// reference dumps, the small tokenizer vocabularies with their vectors, the
// chat-template cases — live in the repository (testdata/, and the demo
// model in models/demo), so a plain clone runs the reference checks. The
// bigger sets (synthetic models of every type, real vocabularies) live only
// in the shared data directory: ../shared beside the checkout, or
// $VKCHAT_SHARED; tests that need them skip with one line naming the file.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoDir returns the repository root, found from this file's location.
func RepoDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	// this file is <root>/internal/testenv/shared.go.
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// SharedDir returns the shared data directory, or "" when it is absent.
// $VKCHAT_SHARED wins even when it names a directory that does not exist:
// that is how a plain clone is simulated (VKCHAT_SHARED=/nonexistent).
func SharedDir() string {
	if d := os.Getenv("VKCHAT_SHARED"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	root := RepoDir()
	if root == "" {
		return ""
	}
	// shared sits beside <root>.
	d := filepath.Join(root, "..", "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return filepath.Clean(d)
	}
	return ""
}

// repoAliases maps shared-data paths to the one copy of a fixture that the
// repository keeps outside testdata/: the demo model is embedded in the
// binary from models/demo, and go:embed cannot reach into testdata/ from
// there, so the tests read that copy instead of a second one.
var repoAliases = map[string]string{
	filepath.Join("models", "stories260K.gguf"): filepath.Join("models", "demo", "stories260K.gguf"),
}

// repoPath is where rel would sit in the repository rooted at root.
func repoPath(root, rel string) string {
	if root == "" {
		return ""
	}
	rel = filepath.Clean(rel)
	if a, ok := repoAliases[rel]; ok {
		return filepath.Join(root, a)
	}
	return filepath.Join(root, "testdata", rel)
}

// Fixture returns the path of rel (a path in the shared data's layout,
// such as "reference/stories260K.p1.json"), or "" when neither place has
// it. A file is taken from the repository first (it is versioned with the
// code that reads it), then from the shared directory. A directory is
// taken from the shared data first, because there it holds the full set
// (reference/ has every synth dump; the repository only stories260K's),
// and from the repository when there is no shared data.
func Fixture(rel string) string { return fixtureIn(RepoDir(), SharedDir(), rel) }

// fixtureIn is Fixture for a given repository root and shared directory
// (either may be "").
func fixtureIn(root, shared, rel string) string {
	rp := repoPath(root, rel)
	var sp string
	if shared != "" {
		sp = filepath.Join(shared, rel)
	}
	rst, rerr := stat(rp)
	_, serr := stat(sp)
	switch {
	case rerr == nil && !rst.IsDir():
		return rp
	case serr == nil:
		return sp
	case rerr == nil:
		return rp
	}
	return ""
}

func stat(p string) (os.FileInfo, error) {
	if p == "" {
		return nil, os.ErrNotExist
	}
	return os.Stat(p)
}

// Shared returns the path of rel (see Fixture), skipping the test with one
// line naming the missing fixture and where it was looked for.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	if p := Fixture(rel); p != "" {
		return p
	}
	t.Skip(Missing(rel))
	return ""
}

// Missing is the one-line reason a test gives when rel is in neither place.
func Missing(rel string) string {
	where := "no shared data (set VKCHAT_SHARED or place it at ../shared)"
	if d := SharedDir(); d != "" {
		where = "not in " + d
	}
	return "test data " + filepath.ToSlash(rel) + " missing: not in the repository's testdata, " + where
}

// Model returns the path of a model in the shared layout's models/.
func Model(t testing.TB, name string) string {
	t.Helper()
	return Shared(t, filepath.Join("models", name))
}
