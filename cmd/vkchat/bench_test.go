package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/gguf"
	"vkchat/runtime/vk/vulkan"
)

func TestBenchJSON(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		args     []string
		path     string // the decode path the rows must report
		bound    bool   // whether the decode row carries the device bound (the CPU's: its read bandwidth)
		needsGPU bool
	}{
		{"cpu", []string{"--backend", "cpu"}, "logits", true, false},
		{"vulkan, head off", []string{"--backend", "vulkan", "--head", "off"}, "logits", true, true},
		{"vulkan, head on", []string{"--backend", "vulkan", "--head", "on"}, "device head", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"--model", path, "-p", "8", "-n", "6", "-r", "2", "--json"}, c.args...)
			err := runBench(context.Background(), args, &out, &errb)
			if c.needsGPU && errors.Is(err, vulkan.ErrNoVulkan) {
				t.Skipf("no Vulkan device: %v", err)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			var rows []benchResult
			if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
				t.Fatalf("bench --json printed what is not a list of results: %v\n%s", err, out.String())
			}
			if len(rows) != 2 || rows[0].Test != "pp8" || rows[1].Test != "tg6" {
				t.Fatalf("rows %+v, want pp8 then tg6", rows)
			}
			for _, r := range rows {
				if len(r.Samples) != 2 || !(r.TokensPerSecond > 0) {
					t.Errorf("%s: %d samples, %g tok/s", r.Test, len(r.Samples), r.TokensPerSecond)
				}
			}
			if rows[0].DecodePath != "" || rows[0].BoundTPS != 0 {
				t.Errorf("the prefill row carries decode fields: %+v", rows[0])
			}
			tg := rows[1]
			if tg.DecodePath != c.path {
				t.Errorf("decode path %q, want %q", tg.DecodePath, c.path)
			}
			if !c.bound {
				if tg.BoundTPS != 0 {
					t.Errorf("a bound on the cpu backend: %+v", tg.bound)
				}
				return
			}
			// Every weight but the embedding table (one row is gathered)
			// is streamed per token; stories260K's output shares nothing.
			embd := int64(len(m.TokenEmbd.Data))
			if lo, hi := uint64(m.WeightBytes()-embd), uint64(m.WeightBytes()+embd); tg.BytesPerToken < lo || tg.BytesPerToken > hi {
				t.Errorf("bytes per token %d, want within [%d, %d] (weights %d, embedding %d)", tg.BytesPerToken, lo, hi, m.WeightBytes(), embd)
			}
			if !(tg.ReadBandwidth > 0) {
				t.Fatalf("read bandwidth %g", tg.ReadBandwidth)
			}
			if want := tg.ReadBandwidth / float64(tg.BytesPerToken); math.Abs(tg.BoundTPS-want) > 1e-9*want {
				t.Errorf("bound %g tok/s, want bandwidth/bytes = %g", tg.BoundTPS, want)
			}
			if want := tg.TokensPerSecond / tg.BoundTPS; math.Abs(tg.FractionOfBound-want) > 1e-9 {
				t.Errorf("fraction %g, want %g", tg.FractionOfBound, want)
			}
		})
	}
}

func TestBenchRejectsBadHead(t *testing.T) {
	var out, errb bytes.Buffer
	err := runBench(context.Background(), []string{"--model", "x.gguf", "--head", "sometimes"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `--head "sometimes"`) {
		t.Fatalf("got %v", err)
	}
}

// fakeHead is a HeadBackend whose head always overflows, so the bench must
// read the vocabulary as the chat does.
type fakeHead struct {
	backend.Backend
	logits []float32
	asked  uint64
}

func (f *fakeHead) MaxHead() int { return 4 }
func (f *fakeHead) ForwardHead(ctx context.Context, tokens []int32, pos, k int) (backend.Head, bool, error) {
	return backend.Head{Seq: 7}, false, nil
}
func (f *fakeHead) LastLogits(seq uint64) ([]float32, error) {
	f.asked = seq
	return f.logits, nil
}

func TestDecodeStepFallsBackOnOverflow(t *testing.T) {
	fb := &fakeHead{logits: []float32{0, 3, 1, 2}}
	step, path := decodeStep(fb)
	if path != "device head" {
		t.Fatalf("path %q", path)
	}
	got, err := step(context.Background(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got != 1 || fb.asked != 7 {
		t.Errorf("token %d from step %d's logits, want token 1 from step 7", got, fb.asked)
	}
}

// TestProfileKind: the profile's rows drop the layer and part suffixes,
// and the tiled product's phase 0 (x rounded to the vec_dot_type) gets a
// row of its own beside its product, though both run one shader.
func TestProfileKind(t *testing.T) {
	for _, c := range []struct {
		label, kernel, want string
	}{
		{"L3 qkv", "matvec_q4_0", "qkv (matvec_q4_0)"},
		{"L11 gate+up (gate) part 1", "matmul_q4_0", "gate+up (matmul_q4_0)"},
		{"L0 wo (x to q4_0's vec_dot_type)", "matmul_q4_0", "wo x (matmul_q4_0)"},
		{"output", "matvec_q6_k", "output (matvec_q6_k)"},
		{"Lx attention", "attention", "Lx (attention)"},
	} {
		if got := profileKind(vulkan.KernelTime{Label: c.label, Kernel: c.kernel}); got != c.want {
			t.Errorf("profileKind(%q, %q) = %q, want %q", c.label, c.kernel, got, c.want)
		}
	}
}

// TestBenchTeamLoad: --team both --load 1 runs every test four times in
// one run (hand-off then team, quiet then beside a busy child process),
// each row saying which; a bad --team or --load is refused by name.
func TestBenchTeamLoad(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	var out, errb bytes.Buffer
	args := []string{"--model", path, "--backend", "cpu", "-p", "4", "-n", "3", "-r", "1", "--json", "--team", "both", "--load", "1"}
	if err := runBench(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var rows []benchResult
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("bench --json printed what is not a list of results: %v\n%s", err, out.String())
	}
	want := []struct {
		test, team string
		load       int
	}{
		{"pp4 handoff", "off", 0}, {"tg3 handoff", "off", 0},
		{"pp4 team", "on", 0}, {"tg3 team", "on", 0},
		{"pp4 handoff +load1", "off", 1}, {"tg3 handoff +load1", "off", 1},
		{"pp4 team +load1", "on", 1}, {"tg3 team +load1", "on", 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Test != w.test || r.Team != w.team || r.Load != w.load || !(r.TokensPerSecond > 0) {
			t.Errorf("row %d: %q team %q load %d at %g tok/s, want %q team %q load %d", i, r.Test, r.Team, r.Load, r.TokensPerSecond, w.test, w.team, w.load)
		}
	}
	for _, bad := range [][]string{{"--team", "maybe"}, {"--load", "-1"}, {"--load-session", "other"}} {
		err := runBench(context.Background(), append([]string{"--model", path, "--backend", "cpu", "-r", "1"}, bad...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error %v, want one naming %s", bad, err, bad[0])
		}
	}
}

// TestSpinStops: the load's threads stop when its standard input closes.
func TestSpinStops(t *testing.T) {
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() { spin(1, r); close(done) }()
	time.Sleep(20 * time.Millisecond)
	w.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("spin still running 10s after its input closed")
	}
}

// TestLoadSession: --load-session own starts the busy child in a session
// of its own (so that autogroup scheduling puts it in a group of its
// own, as a process from another terminal), same in the bench's.
func TestLoadSession(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the session from /proc")
	}
	for _, apart := range []bool{false, true} {
		cmd, in, err := loadCmd(1, apart)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		in.Close()
		_ = cmd.Wait()
		if err != nil {
			t.Fatal(err)
		}
		// the fields after the command's closing parenthesis: state, ppid, pgrp, session
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		mine, err := os.ReadFile("/proc/self/stat")
		if err != nil {
			t.Fatal(err)
		}
		g := strings.Fields(string(mine[bytes.LastIndexByte(mine, ')')+1:]))
		if same := f[3] == g[3]; same == apart {
			t.Errorf("apart %v: the load's session %s, the bench's %s", apart, f[3], g[3])
		}
	}
}

// TestPrintLoadKept: each loaded row is set against the same test and
// way of sharing run quietly.
func TestPrintLoadKept(t *testing.T) {
	rows := []benchResult{
		{Test: "tg32 handoff", Team: "off", TokensPerSecond: 40},
		{Test: "tg32 team", Team: "on", TokensPerSecond: 50},
		{Test: "tg32 handoff +load2", Team: "off", Load: 2, TokensPerSecond: 10},
		{Test: "tg32 team +load2", Team: "on", Load: 2, TokensPerSecond: 30},
		{Test: "tg32 +load2", Load: 2, TokensPerSecond: 5}, // no quiet row: nothing said
	}
	var out bytes.Buffer
	printLoadKept(&out, rows)
	want := "tg32 handoff +load2: 10.00 tok/s beside 2 busy threads, 25% of 40.00 quietly (tg32 handoff)\n" +
		"tg32 team +load2: 30.00 tok/s beside 2 busy threads, 60% of 50.00 quietly (tg32 team)\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestPrintContention: each row the team judged says how many of its
// windows ran as contended; rows it did not judge say nothing.
func TestPrintContention(t *testing.T) {
	rows := []benchResult{
		{Test: "tg32 handoff", Team: "off"},
		{Test: "tg32 team", Team: "on", Windows: 20},
		{Test: "tg32 team +load2", Team: "on", Load: 2, Windows: 41, Contended: 39},
	}
	var out bytes.Buffer
	printContention(&out, rows)
	want := "tg32 team: the team ran as contended in 0 of 20 windows of decode steps\n" +
		"tg32 team +load2: the team ran as contended in 39 of 41 windows of decode steps\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestBenchCPUProfile: bench --profile on the CPU backend prints the
// prefill's and the decode steps' op tables, the output product among
// their rows, with each op's share of the wall time.
func TestBenchCPUProfile(t *testing.T) {
	var out, errb bytes.Buffer
	err := runBench(context.Background(), []string{"--model", testenv.Model(t, "stories260K.gguf"), "--backend", "cpu", "-p", "8", "-n", "4", "-r", "1", "--profile"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	text := out.String()
	for _, want := range []string{"prefill of 8 tokens at position 0: ", "decode, 4 steps from position 0: ", "  head: products → logits  ", "  attention  "} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Count(text, "share of wall") != 2 {
		t.Errorf("want two op tables in\n%s", text)
	}
}
