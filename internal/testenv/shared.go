// Package testenv finds the project's shared test data (../shared beside the
// checkout, or $VKCHAT_SHARED) so every test locates it the same way.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// SharedDir returns the shared data directory, or "" when it is absent.
func SharedDir() string {
	if d := os.Getenv("VKCHAT_SHARED"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	// this file is <root>/internal/testenv/shared.go; shared sits beside <root>.
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return filepath.Clean(d)
	}
	return ""
}

// Shared returns the path of rel inside the shared directory, skipping the
// test with a clear message when the data is not there.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	d := SharedDir()
	if d == "" {
		t.Skip("shared test data not found: set VKCHAT_SHARED or place it at ../shared")
	}
	p := filepath.Join(d, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data %s not found: %v", rel, err)
	}
	return p
}

// Model returns the path of a model in shared/models.
func Model(t testing.TB, name string) string { return Shared(t, filepath.Join("models", name)) }
