package archcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"vkchat/internal/testenv"
)

// TestShaderBuildCountsKernels holds shaders/build.sh's comment ("N
// kernels from M sources") to the committed build: shaders/spv holds one
// file per kernel, and `make shaders-check` keeps it what build.sh makes.
func TestShaderBuildCountsKernels(t *testing.T) {
	dir := filepath.Join(testenv.RepoDir(), "shaders")
	script, err := os.ReadFile(filepath.Join(dir, "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(\d+) kernels from (\d+) sources`).FindSubmatch(script)
	if m == nil {
		t.Fatal(`shaders/build.sh does not say how many kernels it builds ("N kernels from M sources")`)
	}
	saidKernels, _ := strconv.Atoi(string(m[1]))
	saidSources, _ := strconv.Atoi(string(m[2]))
	kernels, err := filepath.Glob(filepath.Join(dir, "spv", "*.spv"))
	if err != nil {
		t.Fatal(err)
	}
	sources, err := filepath.Glob(filepath.Join(dir, "*.comp"))
	if err != nil {
		t.Fatal(err)
	}
	if saidKernels != len(kernels) || saidSources != len(sources) {
		t.Errorf("shaders/build.sh says %d kernels from %d sources; shaders/spv holds %d kernels built from %d *.comp sources",
			saidKernels, saidSources, len(kernels), len(sources))
	}
}
