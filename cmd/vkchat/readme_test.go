package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCommands returns README's command block ("## Commands", the sh
// block) as the flags each `vkchat CMD` line names, continuation lines
// included and comments left out.
func readmeCommands(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i := strings.Index(readme, "## Commands\n\n```sh\n")
	if i < 0 {
		t.Fatal("README.md has no ## Commands sh block")
	}
	block := readme[i+len("## Commands\n\n```sh\n"):]
	block = block[:strings.Index(block, "```")]
	flagRE := regexp.MustCompile(`^\[?(--?[a-z][a-z0-9-]*)`)
	cmds := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if c := strings.Index(line, "#"); c >= 0 {
			line = line[:c]
		}
		fields := strings.Fields(line)
		for k := 0; k < len(fields); k++ {
			if fields[k] == "vkchat" && k+1 < len(fields) {
				cur = fields[k+1]
				if _, ok := cmds[cur]; !ok {
					cmds[cur] = []string{}
				}
				k++
				continue
			}
			if m := flagRE.FindStringSubmatch(fields[k]); m != nil && cur != "" {
				cmds[cur] = append(cmds[cur], strings.TrimLeft(m[1], "-"))
			}
		}
	}
	return cmds
}

// TestREADMECommands: README's command block agrees with the commands:
// each command it names exists, each flag it shows is one the command
// takes (its --help lists it), and every command that takes --model shows
// it (vkchat info took only a positional file).
func TestREADMECommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("read %d commands from README's block: %v", len(cmds), cmds)
	}
	for name, flags := range cmds {
		if _, ok := commands[name]; !ok {
			t.Errorf("README names vkchat %s, which is not a command", name)
			continue
		}
		_, help, _ := runCmd(t, name, "--help")
		takes := func(f string) bool {
			for _, end := range []string{" ", "\n", "\t"} {
				if strings.Contains(help, "\n  -"+f+end) {
					return true
				}
			}
			return false
		}
		for _, f := range flags {
			if !takes(f) {
				t.Errorf("README shows vkchat %s --%s, which its --help does not list", name, f)
			}
		}
		if takes("model") && !strings.Contains(" "+strings.Join(flags, " ")+" ", " model ") {
			t.Errorf("vkchat %s takes --model but README's line does not show it", name)
		}
	}
	for name := range commands {
		if _, ok := cmds[name]; !ok {
			t.Errorf("vkchat %s is missing from README's command block", name)
		}
	}
}

// TestInfoTakesModelAnywhere: vkchat info takes --model like every command,
// the file alone still works, flags may follow the file, and demo names
// the built-in model there too.
func TestInfoTakesModelAnywhere(t *testing.T) {
	path, err := modelPath("demo")
	if err != nil {
		t.Fatal(err)
	}
	want := "memory:          weights 1.1 MiB + KV cache 6.2 KiB at ctx 10 = 1.1 MiB"
	for _, args := range [][]string{
		{"--model", "demo", "--ctx", "10"},
		{"--ctx", "10", "--model", path},
		{"demo", "--ctx", "10"},
		{path, "--ctx", "10"},
		{"--ctx", "10", path},
		{"--ctx", "10", "--", path},
	} {
		out, errOut, rc := runCmd(t, append([]string{"info"}, args...)...)
		if rc != 0 || !strings.Contains(out, want) || !strings.Contains(out, "file:            "+path) {
			t.Errorf("info %v: exit %d, %s%s", args, rc, out, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no model: pass --model FILE (or demo)"},
		{[]string{"--model", "demo", path}, "both name a model: give one"},
		{[]string{path, path}, "expected one model file, got 2"},
	} {
		_, errOut, rc := runCmd(t, append([]string{"info"}, tc.args...)...)
		if rc == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("info %v: exit %d, stderr %q; want %q", tc.args, rc, errOut, tc.want)
		}
	}
}

// TestSeedHelp: the chat draws a seed for each run, so its --help names no
// fixed default seed; run's seed is fixed and says so.
func TestSeedHelp(t *testing.T) {
	seedLine := func(cmd string) string {
		_, help, _ := runCmd(t, cmd, "--help")
		i := strings.Index(help, "\n  -seed ")
		if i < 0 {
			t.Fatalf("%s --help lists no -seed:\n%s", cmd, help)
		}
		line := help[i+1:]
		if j := strings.Index(line, "\n  -"); j >= 0 {
			line = line[:j]
		}
		return line
	}
	if l := seedLine("chat"); strings.Contains(l, "14613015") || !strings.Contains(l, "drawn for each chat") {
		t.Errorf("chat --help: %q; want the drawn seed, no fixed default", l)
	}
	if l := seedLine("run"); !strings.Contains(l, "(default 14613015)") {
		t.Errorf("run --help: %q; want the fixed default", l)
	}
}

// TestReplayFlagsAfterTheFile: README shows "vkchat replay F.jsonl
// [--model FILE]"; flags after the export were taken as more files.
func TestReplayFlagsAfterTheFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lp.jsonl")
	if _, errOut, rc := runCmd(t, "run", "--model", "demo", "--backend", "cpu", "--prompt", "Once", "-n", "4", "--logprobs", out); rc != 0 {
		t.Fatalf("run: exit %d: %s", rc, errOut)
	}
	for _, args := range [][]string{{out, "--model", "demo", "--threads", "1"}, {"--threads", "1", out, "--model", "demo"}} {
		if stdout, errOut, rc := runCmd(t, append([]string{"replay"}, args...)...); rc != 0 {
			t.Errorf("replay %v: exit %d: %s%s", args, rc, stdout, errOut)
		}
	}
}
