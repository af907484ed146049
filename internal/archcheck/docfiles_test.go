package archcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fileName is a source file named in a package doc's file list.
var fileName = regexp.MustCompile(`\b[A-Za-z0-9_]+\.(go|c|h)\b`)

// docFileList returns the files a package comment's file list names, and
// whether it has one: the lines after a line starting "Layout" or "Files"
// and ending in a colon, up to the next empty comment line.
func docFileList(src string) ([]string, bool) {
	var comment []string
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "package ") {
			break
		}
		if text, ok := strings.CutPrefix(line, "//"); ok {
			comment = append(comment, strings.TrimSpace(text))
		} else {
			comment = nil // a comment not attached to the package clause
		}
	}
	for i, line := range comment {
		if !(strings.HasPrefix(line, "Layout") || strings.HasPrefix(line, "Files")) || !strings.HasSuffix(line, ":") {
			continue
		}
		j := i + 1
		for j < len(comment) && comment[j] == "" {
			j++
		}
		var names []string
		for ; j < len(comment) && comment[j] != ""; j++ {
			names = append(names, fileName.FindAllString(comment[j], -1)...)
		}
		return names, true
	}
	return nil, false
}

// sourceFiles is every non-test Go, C and header file in dir but doc.go,
// whatever its build constraints.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || n == "doc.go" || strings.HasSuffix(n, "_test.go") || !fileName.MatchString(n) || fileName.FindString(n) != n {
			continue
		}
		names = append(names, n)
	}
	return names
}

// TestPackageDocsListTheirFiles holds every package comment that lists its
// files (a "Layout, by responsibility:" or "Files:" block in doc.go) to
// the files beside it: each non-test source file is named, and each name
// is a file that exists.
func TestPackageDocsListTheirFiles(t *testing.T) {
	checked := 0
	for _, p := range goList(t) {
		doc := filepath.Join(p.Dir, "doc.go")
		src, err := os.ReadFile(doc)
		if err != nil {
			continue
		}
		named, ok := docFileList(string(src))
		if !ok {
			continue
		}
		checked++
		rel := p.ImportPath
		if s, ok := short(rel); ok {
			rel = s
		}
		files := sourceFiles(t, p.Dir)
		for _, f := range files {
			if !slices.Contains(named, f) {
				t.Errorf("%s/doc.go lists its files but not %s: add a line saying what it holds", rel, f)
			}
		}
		for _, n := range named {
			if n != "doc.go" && !slices.Contains(files, n) {
				t.Errorf("%s/doc.go names %s, which is not a source file of the package", rel, n)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package doc lists its files: the check found nothing to check")
	}
}
