package cpu

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"vkchat/runtime/quant"
)

// DefaultThreads is the worker count when none is asked for: one per
// physical core this process may run on, as llama.cpp picks. A second
// hardware thread on a core shares its load ports and caches, so decode,
// which waits on memory, gains nothing from it and loses to the extra
// hand-offs. Where the topology cannot be read it is runtime.NumCPU().
var DefaultThreads = sync.OnceValue(func() int {
	if n, err := physicalCores("/"); err == nil && n > 0 {
		return min(n, runtime.NumCPU())
	}
	return runtime.NumCPU()
})

// physicalCores counts the distinct (package, core) pairs of the CPUs in
// this process's affinity list, read under root (a test's fake tree).
func physicalCores(root string) (int, error) {
	status, err := os.ReadFile(filepath.Join(root, "proc/self/status"))
	if err != nil {
		return 0, err
	}
	var list string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			list = strings.TrimSpace(v)
		}
	}
	cpus, err := parseCPUList(list)
	if err != nil {
		return 0, fmt.Errorf("proc/self/status: Cpus_allowed_list: %w", err)
	}
	cores := map[[2]string]bool{}
	for _, c := range cpus {
		dir := filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(c), "topology")
		pkg, err1 := os.ReadFile(filepath.Join(dir, "physical_package_id"))
		core, err2 := os.ReadFile(filepath.Join(dir, "core_id"))
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("cpu%d topology unreadable", c)
		}
		cores[[2]string{strings.TrimSpace(string(pkg)), strings.TrimSpace(string(core))}] = true
	}
	return len(cores), nil
}

// parseCPUList reads a kernel CPU list such as "0-3,8,10-11"; at most 1<<16
// CPUs, so a corrupt range cannot ask for a giant slice.
func parseCPUList(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q in %q", lo, s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU range %q in %q", part, s)
			}
		}
		if len(cpus)+b-a+1 > 1<<16 {
			return nil, fmt.Errorf("CPU list %q names over %d CPUs", s, 1<<16)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// SetTeam chooses how the workers share each op from now on, for every
// CPU backend of the process: as a team through each forward pass (true,
// the default) or by handing each op to idle workers (false,
// VKCHAT_CPU_TEAM=off); results are bit-identical either way
// (quant.SetTeam). The bench measures both in one run with it.
func SetTeam(on bool) { quant.SetTeam(on) }

// TeamOn reports which SetTeam is in force.
func TeamOn() bool { return quant.TeamOn() }

// TeamContention reports how many windows of decode steps the team has
// judged so far, and how many of them contended (another process busy on
// the cores: the team then runs its element-wise ops on the caller alone
// and parks its helpers between ops; quant.ContentionWindows).
func TeamContention() (judged, contended int64) { return quant.ContentionWindows() }
