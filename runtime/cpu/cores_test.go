package cpu

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"0", []int{0}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"", nil, true},
		{"3-1", nil, true},
		{"a", nil, true},
		{"0-", nil, true},
		{"-1", nil, true},
		{"0-99999999", nil, true},
	} {
		got, err := parseCPUList(c.in)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestPhysicalCores reads fake trees: 4 CPUs that are 2 cores with two
// hardware threads each, of which the affinity list allows 3 (2 cores);
// and two packages whose core ids repeat.
func TestPhysicalCores(t *testing.T) {
	write := func(root, path, s string) {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree := func(allowed string, pkgCore [][2]int) string {
		root := t.TempDir()
		write(root, "proc/self/status", "Name:\tx\nCpus_allowed:\tf\nCpus_allowed_list:\t"+allowed+"\n")
		for c, pc := range pkgCore {
			dir := "sys/devices/system/cpu/cpu" + strconv.Itoa(c) + "/topology/"
			write(root, dir+"physical_package_id", strconv.Itoa(pc[0])+"\n")
			write(root, dir+"core_id", strconv.Itoa(pc[1])+"\n")
		}
		return root
	}
	smt := [][2]int{{0, 0}, {0, 1}, {0, 0}, {0, 1}}
	for _, c := range []struct {
		root string
		want int
	}{
		{tree("0-3", smt), 2},
		{tree("0-2", smt), 2},
		{tree("0,2", smt), 1},
		{tree("0-3", [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}}), 4},
	} {
		got, err := physicalCores(c.root)
		if err != nil || got != c.want {
			t.Errorf("physicalCores = %d, %v; want %d", got, err, c.want)
		}
	}
	if _, err := physicalCores(tree("0-5", smt)); err == nil {
		t.Error("a CPU without topology files: no error")
	}
	if n := DefaultThreads(); n < 1 {
		t.Errorf("DefaultThreads() = %d", n)
	}
}
