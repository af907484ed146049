package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"vkchat/runtime/cpu"
)

// The CPU backend shares a job between its threads in one of two ways
// (runtime/quant's team, or the hand-off to idle pool workers), and must
// keep its speed beside another busy process. bench --team both measures
// the two in one run, and --load N measures each quietly and again beside
// a child process spinning N busy threads. The child runs in the bench's
// session unless --load-session own puts it in a session of its own, as a
// build started from another terminal is: with the kernel's autogroup
// scheduling each session is a group that shares the cores with the other
// groups, so the two say different things about the same load.

// benchConfig is one pass of a bench's tests: how jobs are shared ("" as
// the process started) and the busy threads beside it.
type benchConfig struct {
	team string
	load int
	// apart: the load runs in a session of its own (--load-session own)
	apart bool
}

// suffix tells a config's rows apart in the table.
func (c benchConfig) suffix() string {
	s := ""
	if c.team != "" {
		s += " " + map[string]string{"on": "team", "off": "handoff"}[c.team]
	}
	if c.load > 0 {
		s += fmt.Sprintf(" +load%d", c.load)
		if c.apart {
			s += " apart"
		}
	}
	return s
}

// benchConfigs is every config of --team and --load, the quiet ones first,
// the hand-off before the team at each load.
func benchConfigs(team string, load int, session string) ([]benchConfig, error) {
	var teams []string
	switch team {
	case "":
		teams = []string{""}
	case "on", "off":
		teams = []string{team}
	case "both":
		teams = []string{"off", "on"}
	default:
		return nil, fmt.Errorf("--team %q: want on, off or both", team)
	}
	if load < 0 {
		return nil, fmt.Errorf("--load %d is negative: want the number of busy threads beside the bench", load)
	}
	var apart bool
	switch session {
	case "same":
	case "own":
		apart = true
	default:
		return nil, fmt.Errorf("--load-session %q: want same (the bench's session) or own", session)
	}
	loads := []int{0}
	if load > 0 {
		loads = append(loads, load)
	}
	var out []benchConfig
	for _, l := range loads {
		for _, t := range teams {
			out = append(out, benchConfig{team: t, load: l, apart: apart && l > 0})
		}
	}
	return out, nil
}

// apply switches to the config's way of sharing jobs and starts its load;
// the returned function stops the load.
func (c benchConfig) apply() (stop func(), err error) {
	if c.team != "" {
		cpu.SetTeam(c.team == "on")
	}
	if c.load == 0 {
		return func() {}, nil
	}
	return startLoad(c.load, c.apart)
}

// spinEnv makes a vkchat process a load: that many threads busy until its
// standard input closes (the bench ends it, or died).
const spinEnv = "VKCHAT_BENCH_SPIN"

func init() {
	if v := os.Getenv(spinEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			fmt.Fprintf(os.Stderr, "vkchat: %s=%q: want a thread count from 1 to 1024\n", spinEnv, v)
			os.Exit(2)
		}
		spin(n, os.Stdin)
		os.Exit(0)
	}
}

// spin keeps n threads busy with arithmetic (no memory traffic, as a
// compile or a stress -c would) until stdin reads EOF or fails.
func spin(n int, stdin io.Reader) {
	runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	var sink atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(i + 1)
			for !done.Load() {
				for k := 0; k < 1<<16; k++ {
					x = x*6364136223846793005 + 1442695040888963407
				}
				sink.Store(x)
			}
		}()
	}
	_, _ = io.Copy(io.Discard, stdin)
	done.Store(true)
	wg.Wait()
}

// startLoad starts a child vkchat spinning n threads, in a session of its
// own when apart; stop ends it.
func startLoad(n int, apart bool) (stop func(), err error) {
	cmd, in, err := loadCmd(n, apart)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--load: starting %d busy threads: %w", n, err)
	}
	return func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}, nil
}

// loadCmd is the child of startLoad, not started, and the pipe whose
// closing ends it.
func loadCmd(n int, apart bool) (*exec.Cmd, io.WriteCloser, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("--load: finding this program to run the load: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", spinEnv, n))
	if apart {
		// a session of its own, and so, with autogroup scheduling, a
		// scheduling group of its own
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("--load: %w", err)
	}
	return cmd, in, nil
}

// printLoadKept says, for each test run quietly and under --load, what
// share of its quiet speed each way of sharing jobs kept under the load.
func printLoadKept(w io.Writer, rs []benchResult) {
	quiet := map[string]float64{}
	for _, r := range rs {
		if r.Load == 0 {
			quiet[r.Test] = r.TokensPerSecond
		}
	}
	for _, r := range rs {
		if r.Load == 0 {
			continue
		}
		q := benchConfig{team: r.Team}.suffix()
		base := strings.TrimSuffix(r.Test, benchConfig{team: r.Team, load: r.Load, apart: r.LoadApart}.suffix()) + q
		if qt := quiet[base]; qt > 0 {
			fmt.Fprintf(w, "%s: %.2f tok/s beside %d busy threads, %.0f%% of %.2f quietly (%s)\n", r.Test, r.TokensPerSecond, r.Load, 100*r.TokensPerSecond/qt, qt, base)
		}
	}
}

// printContention says, for each CPU decode row run by the team, how
// often the team judged its steps contended (runtime/quant's contend.go:
// it then runs its element-wise ops on the caller alone and parks its
// helpers between ops), so that a quiet row run as contended, or a loaded
// one run as quiet, shows.
func printContention(w io.Writer, rs []benchResult) {
	for _, r := range rs {
		if r.Windows > 0 {
			fmt.Fprintf(w, "%s: the team ran as contended in %d of %d windows of decode steps\n", r.Test, r.Contended, r.Windows)
		}
	}
}
