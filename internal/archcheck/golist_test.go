package archcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// modulePath is the prefix of every package of this repository.
const modulePath = "vkchat"

// listed is what `go list -json` says of one package, as far as these
// tests need it.
type listed struct {
	ImportPath string
	Dir        string
	Imports    []string // non-test imports; test files may import more
	Error      *struct{ Err string }
}

// goList runs `go list -e -json ./...` at the repository root. -e keeps a
// package that does not compile in the list: go list reads import clauses
// only, so a type error elsewhere does not hide a package's imports.
func goList(t *testing.T) []listed {
	t.Helper()
	root := testenv.RepoDir()
	if root == "" {
		t.Fatal("cannot find the repository root")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "list", "-e", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./... in %s: %v\n%s", root, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Error != nil && strings.Contains(p.Error.Err, "no Go files") {
			continue
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// short is a package path without the module's prefix ("runtime/cpu").
func short(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, modulePath+"/")
	return rest, ok
}
