// Package scripts holds the shell scripts' tests; deps_test.go runs
// deps.sh against fake package managers on a PATH of their own.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool is a shell script standing in for a system command: it logs
// its arguments and exits with code.
func fakeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	script := "#!/bin/sh\necho \"" + name + " $*\" >> \"$FAKE_LOG\"\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// realTools links the few real commands deps.sh uses into dir, so PATH can
// hold only dir and the host's own package manager stays out of sight.
func realTools(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"sh", "grep", "sed", "cat", "env"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not found", name)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDepsSelectsPackageManager(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script, err := filepath.Abs("deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	const missing = "exit 1"   // a query that finds nothing installed
	const installed = "exit 0" // a query (or install) that succeeds
	cases := []struct {
		name      string
		tools     map[string]string // fake commands and their bodies
		env       []string
		wantCmds  []string // lines in the fake log, in order (queries excluded)
		wantErr   string   // in stderr
		wantFail  bool
		forbidden []string // commands that must not have run
	}{
		{
			name:     "apt on Debian",
			tools:    map[string]string{"apt-get": installed, "dpkg-query": missing, "uname": "echo Linux", "id": "echo 0"},
			wantCmds: []string{"apt-get update -qq", "apt-get install -y -qq --no-install-recommends libvulkan-dev mesa-vulkan-drivers glslc"},
		},
		{
			name:     "dnf on Fedora",
			tools:    map[string]string{"dnf": installed, "rpm": missing, "uname": "echo Linux", "id": "echo 0"},
			wantCmds: []string{"dnf install -y -q vulkan-loader-devel vulkan-headers mesa-vulkan-drivers glslc"},
		},
		{
			name:     "pacman on Arch, with validation layers",
			tools:    map[string]string{"pacman": `case "$1" in -Q) exit 1;; esac`, "uname": "echo Linux", "id": "echo 0"},
			env:      []string{"WITH_VALIDATION=1"},
			wantCmds: []string{"pacman -S --needed --noconfirm vulkan-icd-loader vulkan-headers vulkan-swrast shaderc vulkan-validation-layers"},
		},
		{
			name:     "zypper on openSUSE, through sudo",
			tools:    map[string]string{"zypper": installed, "rpm": missing, "uname": "echo Linux", "id": "echo 1000", "sudo": `exec "$@"`},
			wantCmds: []string{"sudo zypper --non-interactive install vulkan-devel libvulkan_lvp shaderc", "zypper --non-interactive install vulkan-devel libvulkan_lvp shaderc"},
		},
		{
			name:      "Homebrew on macOS, never through sudo",
			tools:     map[string]string{"brew": `case "$1" in list) exit 1;; esac`, "apt-get": installed, "uname": "echo Darwin", "id": "echo 501", "sudo": installed},
			wantCmds:  []string{"brew install molten-vk vulkan-loader vulkan-headers shaderc"},
			forbidden: []string{"sudo", "apt-get"},
		},
		{
			name:      "only what is missing",
			tools:     map[string]string{"apt-get": installed, "dpkg-query": `[ "$3" = glslc ] && exit 1; echo "install ok installed"`, "uname": "echo Linux", "id": "echo 0"},
			wantCmds:  []string{"apt-get update -qq", "apt-get install -y -qq --no-install-recommends glslc"},
			forbidden: []string{"libvulkan-dev mesa"},
		},
		{
			name:      "everything installed: nothing to do",
			tools:     map[string]string{"dnf": installed, "rpm": installed, "uname": "echo Linux", "id": "echo 0"},
			forbidden: []string{"dnf install"},
		},
		{
			name:      "dry run prints the command",
			tools:     map[string]string{"dnf": installed, "rpm": missing, "uname": "echo Linux", "id": "echo 0"},
			env:       []string{"DEPS_DRY_RUN=1"},
			wantErr:   "dnf install -y -q vulkan-loader-devel",
			forbidden: []string{"dnf install"},
		},
		{
			name:      "not root and no sudo: says what to run",
			tools:     map[string]string{"apt-get": installed, "dpkg-query": missing, "uname": "echo Linux", "id": "echo 1000"},
			wantErr:   "run as root",
			wantFail:  true,
			forbidden: []string{"apt-get install"},
		},
		{
			name:    "no package manager: names what to install, build goes on",
			tools:   map[string]string{"uname": "echo Linux", "id": "echo 0"},
			wantErr: "install by hand: the Vulkan loader and its headers",
		},
		{
			name:     "DEPS_PM wins over detection",
			tools:    map[string]string{"apt-get": installed, "zypper": installed, "rpm": missing, "uname": "echo Linux", "id": "echo 0"},
			env:      []string{"DEPS_PM=zypper"},
			wantCmds: []string{"zypper --non-interactive install vulkan-devel libvulkan_lvp shaderc"},
		},
		{
			name:     "unknown DEPS_PM",
			tools:    map[string]string{"uname": "echo Linux", "id": "echo 0"},
			env:      []string{"DEPS_PM=nix"},
			wantErr:  "not one of apt, dnf, pacman, zypper, brew",
			wantFail: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			realTools(t, bin)
			fakeTool(t, bin, "go", "exit 0")
			for name, body := range c.tools {
				fakeTool(t, bin, name, body)
			}
			log := filepath.Join(dir, "log")
			cmd := exec.Command(sh, script)
			cmd.Env = append([]string{"PATH=" + bin, "FAKE_LOG=" + log, "HOME=" + dir}, c.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if (err != nil) != c.wantFail {
				t.Fatalf("deps.sh: err %v, want failure %v; stderr:\n%s", err, c.wantFail, stderr.String())
			}
			raw, _ := os.ReadFile(log)
			var ran []string
			for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				// Queries and the probes of the environment are not installs.
				if l == "" || strings.HasPrefix(l, "dpkg-query") || strings.HasPrefix(l, "rpm ") || strings.HasPrefix(l, "pacman -Q") ||
					strings.HasPrefix(l, "brew list") || strings.HasPrefix(l, "uname") || strings.HasPrefix(l, "id ") || strings.HasPrefix(l, "go ") {
					continue
				}
				ran = append(ran, l)
			}
			if len(c.wantCmds) > 0 && strings.Join(ran, "\n") != strings.Join(c.wantCmds, "\n") {
				t.Errorf("ran:\n  %s\nwant:\n  %s", strings.Join(ran, "\n  "), strings.Join(c.wantCmds, "\n  "))
			}
			for _, f := range c.forbidden {
				for _, r := range ran {
					if strings.HasPrefix(r, f) {
						t.Errorf("ran %q, which this case must not", r)
					}
				}
			}
			if c.wantErr != "" && !strings.Contains(stderr.String(), c.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", c.wantErr, stderr.String())
			}
		})
	}
}
