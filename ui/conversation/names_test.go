package conversation

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSavePathAndResolve(t *testing.T) {
	dir := t.TempDir()
	cwd := t.TempDir()
	t.Chdir(cwd)
	home, _ := os.UserHomeDir()
	for _, f := range []string{filepath.Join(dir, "kept.json"), filepath.Join(dir, "raw"), filepath.Join(cwd, "old.json")} {
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, save, load string
	}{
		{"mychat", filepath.Join(dir, "mychat.json"), filepath.Join(dir, "mychat.json")},
		{"notes.md", filepath.Join(dir, "notes.md"), filepath.Join(dir, "notes.md")},
		{"kept", filepath.Join(dir, "kept.json"), filepath.Join(dir, "kept.json")},
		{"raw", filepath.Join(dir, "raw.json"), filepath.Join(dir, "raw")}, // a file saved without an extension still opens
		{"old.json", filepath.Join(dir, "old.json"), "old.json"},           // only in the working directory
		{"./x.json", "./x.json", "./x.json"},
		{"sub/x", "sub/x", "sub/x"},
		{"/abs/x.json", "/abs/x.json", "/abs/x.json"},
		{"~/x.json", filepath.Join(home, "x.json"), filepath.Join(home, "x.json")},
	}
	for _, tc := range cases {
		if got := SavePath(tc.name, dir); got != tc.save {
			t.Errorf("SavePath(%q) = %q, want %q", tc.name, got, tc.save)
		}
		if got := Resolve(tc.name, dir); got != tc.load {
			t.Errorf("Resolve(%q) = %q, want %q", tc.name, got, tc.load)
		}
	}
}
