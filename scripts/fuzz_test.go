package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fuzz.sh retries a target once only when Go's coordinator reports its
// fuzztime deadline race (golang/go#75804) without a failing input; a real
// finding, or the race twice, fails the run.
func TestFuzzScriptRetriesOnlyTheDeadlineRace(t *testing.T) {
	script, err := filepath.Abs("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	race := `echo "--- FAIL: FuzzX (15s)"; echo "    context deadline exceeded"; exit 1`
	real := `echo "Failing input written to testdata/fuzz/FuzzX/abc"; echo "    context deadline exceeded"; exit 1`
	for _, tc := range []struct {
		name        string
		runs        []string // what each `go test -fuzz` call does, in turn
		wantOK      bool
		wantCalls   int
		wantMessage string
	}{
		{"passes", []string{"echo ok"}, true, 1, ""},
		{"race then pass", []string{race, "echo ok"}, true, 2, "golang/go#75804"},
		{"race twice", []string{race, race}, false, 2, ""},
		{"failing input", []string{real, "echo ok"}, false, 1, ""},
		{"panic", []string{`echo "panic: boom"; echo "context deadline exceeded"; exit 2`, "echo ok"}, false, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pkg := filepath.Join(dir, "pkg")
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, "x_test.go"), []byte("func FuzzX(f *testing.F) {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A fake go: `go list` names one package, `go test` plays the
			// next scripted run.
			var cases strings.Builder
			for i, r := range tc.runs {
				cases.WriteString("  " + string(rune('1'+i)) + ") " + r + " ;;\n")
			}
			fake := "#!/bin/sh\ncase \"$1\" in\nlist) if [ \"$2\" = -f ]; then echo " + pkg + "; else echo fake/pkg; fi ;;\n" +
				"test) n=$(cat \"$FAKE_COUNT\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$FAKE_COUNT\"\n case $n in\n" +
				cases.String() + "  *) echo unexpected; exit 9 ;;\n esac ;;\nesac\n"
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			count := filepath.Join(dir, "count")
			cmd := exec.Command("sh", script, "1s")
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_COUNT="+count)
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.wantOK {
				t.Fatalf("ok=%v, want %v; output:\n%s", err == nil, tc.wantOK, out)
			}
			calls, _ := os.ReadFile(count)
			if got := strings.TrimSpace(string(calls)); got != string(rune('0'+tc.wantCalls)) {
				t.Errorf("go test ran %s times, want %d; output:\n%s", got, tc.wantCalls, out)
			}
			if tc.wantMessage != "" && !strings.Contains(string(out), tc.wantMessage) {
				t.Errorf("output lacks %q:\n%s", tc.wantMessage, out)
			}
		})
	}
}
