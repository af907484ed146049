package archcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// uiRootLines is the most non-test lines the ui root package may have: it
// routes messages and lays out, and what a feature adds belongs in the
// component that owns it (ARCHITECTURE.md, issue 40).
const uiRootLines = 2000

// TestUIRootStaysARouter: the ui root package's non-test files hold at most
// uiRootLines lines.
func TestUIRootStaysARouter(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoDir(), "ui", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ui/*.go files: %v", err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	if n > uiRootLines {
		t.Errorf("the ui root package has %d non-test lines, over %d: move what a component owns (its commands, keys, state) into that component", n, uiRootLines)
	}
	t.Logf("ui root: %d non-test lines (at most %d)", n, uiRootLines)
}
