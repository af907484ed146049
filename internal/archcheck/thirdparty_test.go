package archcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// TestREADMENamesThirdPartyCopies holds the README's third_party/ entry to
// go.mod: every module replaced by a patched copy under third_party/ is
// named there (as owner/repo), so a reader learns which libraries the build
// does not take as released.
func TestREADMENamesThirdPartyCopies(t *testing.T) {
	root := testenv.RepoDir()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The README wraps its lines: compare with runs of spaces as one.
	text := strings.Join(strings.Fields(string(readme)), " ")
	replaced := regexp.MustCompile(`(?m)^\s*(?:replace\s+)?(\S+)\s+=>\s+\./third_party/`).FindAllStringSubmatch(string(mod), -1)
	if len(replaced) == 0 {
		t.Fatal("go.mod replaces no module with a copy under third_party/: the check found nothing to check")
	}
	for _, m := range replaced {
		name := strings.TrimPrefix(m[1], "github.com/")
		if !strings.Contains(text, name) {
			t.Errorf("go.mod replaces %s with a copy under third_party/, but README.md's third_party/ entry does not name %s", m[1], name)
		}
	}
}
