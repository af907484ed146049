package archcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// allowedImports reads the "imports" block of ARCHITECTURE.md: lines of
// "package: import import ...", paths without the module's prefix; a
// package may take several lines. It returns each package's allowed
// imports and, for messages, the line each edge was named on.
func allowedImports(doc string) (map[string][]string, map[string]int, error) {
	lines := strings.Split(doc, "\n")
	start := slices.Index(lines, "```imports")
	if start < 0 {
		return nil, nil, fmt.Errorf("no ```imports block")
	}
	allowed := map[string][]string{}
	where := map[string]int{}
	for i := start + 1; ; i++ {
		if i == len(lines) {
			return nil, nil, fmt.Errorf("the ```imports block at line %d is not closed", start+1)
		}
		line := strings.TrimSpace(lines[i])
		if line == "```" {
			break
		}
		if line == "" {
			continue
		}
		pkg, deps, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(pkg) == "" {
			return nil, nil, fmt.Errorf("line %d: %q is not \"package: imports...\"", i+1, line)
		}
		pkg = strings.TrimSpace(pkg)
		if _, ok := allowed[pkg]; !ok {
			allowed[pkg] = nil
			where[pkg] = i + 1
		}
		for _, d := range strings.Fields(deps) {
			if slices.Contains(allowed[pkg], d) {
				return nil, nil, fmt.Errorf("line %d: %s names %s twice", i+1, pkg, d)
			}
			allowed[pkg] = append(allowed[pkg], d)
			where[pkg+" "+d] = i + 1
		}
	}
	return allowed, where, nil
}

// TestImportsMatchArchitecture holds ARCHITECTURE.md's table of allowed
// imports to `go list`, both ways: every vkchat import of every package is
// in its line, every edge the table names exists, and every package has a
// line (so a new package is placed in the house when it is added).
func TestImportsMatchArchitecture(t *testing.T) {
	docPath := filepath.Join(testenv.RepoDir(), "ARCHITECTURE.md")
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	allowed, where, err := allowedImports(string(raw))
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}
	actual := map[string][]string{}
	for _, p := range goList(t) {
		pkg, ok := short(p.ImportPath)
		if !ok {
			continue
		}
		actual[pkg] = []string{}
		for _, imp := range p.Imports {
			if dep, ok := short(imp); ok {
				actual[pkg] = append(actual[pkg], dep)
			}
		}
	}
	for _, pkg := range sortedKeys(actual) {
		deps, listed := allowed[pkg]
		if !listed {
			t.Errorf("%s has no line in ARCHITECTURE.md's imports block: add %q", pkg, pkg+": "+strings.Join(actual[pkg], " "))
			continue
		}
		for _, d := range actual[pkg] {
			if !slices.Contains(deps, d) {
				t.Errorf("%s imports %s, which ARCHITECTURE.md (line %d) does not allow: add it there (and to the diagram) if the edge is meant, else remove the import",
					pkg, d, where[pkg])
			}
		}
	}
	for _, pkg := range sortedKeys(allowed) {
		deps, exists := actual[pkg]
		if !exists {
			t.Errorf("ARCHITECTURE.md line %d names package %s, which go list does not find: remove its lines", where[pkg], pkg)
			continue
		}
		for _, d := range allowed[pkg] {
			if !slices.Contains(deps, d) {
				t.Errorf("ARCHITECTURE.md line %d allows %s → %s, but %s no longer imports it: remove the edge there (and from the diagram)",
					where[pkg+" "+d], pkg, d, pkg)
			}
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
