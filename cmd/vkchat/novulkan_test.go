package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"vkchat/runtime/vk/vulkan"
)

// TestWithoutVulkanLoader runs the built binary as on a machine with no
// Vulkan at all: the loader lookup points at a file that does not exist
// (VKCHAT_VULKAN_LIBRARY), which is what dlopen sees there. The CPU
// backend must work, and asking for Vulkan must fail with a message that
// says what is missing and what to do.
func TestWithoutVulkanLoader(t *testing.T) {
	bin := buildVkchat(t)
	if runtime.GOOS == "linux" {
		// The loader is opened at run time, never linked: a linked
		// libvulkan would stop the binary before main on such a machine.
		if ldd, err := exec.LookPath("ldd"); err == nil {
			out, _ := exec.Command(ldd, bin).CombinedOutput()
			if strings.Contains(string(out), "libvulkan") {
				t.Errorf("the binary links libvulkan:\n%s", out)
			}
		}
	}
	env := append(os.Environ(), vulkan.LibraryEnv+"="+filepath.Join(t.TempDir(), "no-such-libvulkan.so.1"), "XDG_CACHE_HOME="+t.TempDir())
	run := func(args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("vkchat %s: still running after %s", strings.Join(args, " "), cmdTimeout)
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}

	start := time.Now()
	code, out, errs := run("run", "--model", "demo", "--backend", "cpu", "-n", "12", "--temp", "0")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("run --backend cpu without a loader: exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	t.Logf("cpu backend without a Vulkan loader: %q in %s", strings.TrimSpace(out), time.Since(start).Round(time.Millisecond))

	// The default backend (auto) picks the CPU when there is no loader.
	code, out, errs = run("run", "--model", "demo", "-n", "4")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("run with the default backend and no loader: exit %d, stdout %q, stderr:\n%s", code, out, errs)
	} else if !strings.Contains(errs, "on cpu") {
		t.Errorf("the default backend did not report running on the CPU:\n%s", errs)
	}

	for _, args := range [][]string{
		{"run", "--model", "demo", "--backend", "vulkan", "-n", "4"},
		{"devices"},
	} {
		code, _, errs := run(args...)
		if code == 0 {
			t.Errorf("vkchat %s succeeded without a Vulkan loader", strings.Join(args, " "))
			continue
		}
		for _, want := range []string{"no Vulkan loader", "no-such-libvulkan.so.1", "scripts/deps.sh"} {
			if !strings.Contains(errs, want) {
				t.Errorf("vkchat %s: stderr lacks %q:\n%s", strings.Join(args, " "), want, errs)
			}
		}
		if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine ") {
			t.Errorf("vkchat %s crashed:\n%s", strings.Join(args, " "), errs)
		}
		if args[0] == "run" && !strings.Contains(errs, "--backend cpu") {
			t.Errorf("the vulkan failure does not point at --backend cpu:\n%s", errs)
		}
	}
}
