package archcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// benchFigure is a measured speed in a comment: a rate, a throughput, a
// time or a ratio said to be faster or slower. A duration that is a
// setting (spinLead's 250 µs) is a constant in code, not in a comment.
var benchFigure = regexp.MustCompile(`\d[\d.,]*\s?(tok/s|GB/s|GFLOP)|\d[\d.,]*\s?(ms|µs|us|ns)\b|\d[\d.]*x (faster|slower)|\d+% (faster|slower)`)

// benchPointer is a comment's reference to a heading of docs/benchmarks.md.
var benchPointer = regexp.MustCompile(`docs/benchmarks\.md, "([^"]+)"`)

// commentedSource is the kind of file whose comments are checked.
var commentedSource = regexp.MustCompile(`\.(go|c|h|comp|glsl)$`)

// sourceComments calls f with each comment block of every non-test Go, C,
// header and shader file under runtime/ and shaders/: consecutive comment
// lines joined by spaces, and the line the block starts on.
func sourceComments(t *testing.T, f func(file string, line int, text string)) {
	t.Helper()
	root := testenv.RepoDir()
	for _, dir := range []string{"runtime", "shaders"} {
		walkComments(t, root, dir, f)
	}
}

func walkComments(t *testing.T, root, dir string, f func(file string, line int, text string)) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		n := d.Name()
		if strings.HasSuffix(n, "_test.go") || !commentedSource.MatchString(n) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		var block []string
		start := 0
		flush := func() {
			if len(block) > 0 {
				f(rel, start, strings.Join(block, " "))
			}
			block = nil
		}
		for i, line := range strings.Split(string(src), "\n") {
			text := strings.TrimSpace(line)
			var ok bool
			for _, p := range []string{"//", "/*", "*"} {
				if rest, found := strings.CutPrefix(text, p); found {
					text, ok = strings.TrimSpace(strings.TrimSuffix(rest, "*/")), true
					break
				}
			}
			if !ok {
				flush()
				continue
			}
			if len(block) == 0 {
				start = i + 1
			}
			block = append(block, text)
		}
		flush()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoBenchmarkFiguresInComments keeps measured speeds out of the
// comments of runtime/ and shaders/: they go stale as kernels, drivers and machines change, so they
// live in docs/benchmarks.md with the command that measures them again,
// and a comment keeps the reason and points to the heading.
func TestNoBenchmarkFiguresInComments(t *testing.T) {
	sourceComments(t, func(file string, line int, text string) {
		if m := benchFigure.FindString(text); m != "" {
			t.Errorf("%s:%d: a comment holds a benchmark figure (%q): move it to docs/benchmarks.md and point there (docs/benchmarks.md, \"<heading>\")", file, line, m)
		}
	})
}

// TestBenchmarkPointersNameAHeading holds every comment's pointer
// (docs/benchmarks.md, "<heading>") to a heading the file has.
func TestBenchmarkPointersNameAHeading(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoDir(), "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "#") {
			headings[strings.TrimSpace(strings.TrimLeft(l, "#"))] = true
		}
	}
	pointers := 0
	sourceComments(t, func(file string, line int, text string) {
		if strings.Contains(text, "docs/benchmarks.md") && !benchPointer.MatchString(text) {
			t.Errorf("%s:%d: a comment points to docs/benchmarks.md without naming a heading: write (docs/benchmarks.md, \"<heading>\")", file, line)
		}
		for _, m := range benchPointer.FindAllStringSubmatch(text, -1) {
			pointers++
			if !headings[m[1]] {
				t.Errorf("%s:%d: docs/benchmarks.md has no heading %q", file, line, m[1])
			}
		}
	})
	if pointers == 0 {
		t.Fatal("no comment under runtime/ or shaders/ points to a heading of docs/benchmarks.md: the check found nothing to check")
	}
}
