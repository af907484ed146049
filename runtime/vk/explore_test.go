package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"vkchat/runtime/ggml"
)

func openTest(t testing.TB) *Device {
	t.Helper()
	d, err := Open(-1)
	if err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func timeKernel(t *testing.T, d *Device, k *Kernel, args []Arg, push []uint32, x, y uint32) time.Duration {
	rec, err := d.NewRecorder(0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Begin()
	if err := rec.Dispatch(k.Name, k, args, push, x, y, 1); err != nil {
		t.Fatal(err)
	}
	rec.End()
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	best := time.Hour
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if err := rec.Run(); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	return best
}

func TestExploreMatvec(t *testing.T) {
	if os.Getenv("VKCHAT_EXPLORE") == "" {
		t.Skip("set VKCHAT_EXPLORE=1")
	}
	d := openTest(t)
	rng := rand.New(rand.NewSource(1))
	typ := ggml.Q4_0
	if s := os.Getenv("VKCHAT_TYPE"); s != "" {
		typ, _ = ggml.ParseType(s)
	}
	for _, sh := range [][2]int{{32000, 768}, {8000, 2048}} {
		for _, kn := range strings.Fields(os.Getenv("VKCHAT_KERNELS") + " -") {
			if kn != "-" && kn[0] == 'r' {
				testRB = int(kn[1] - '0')
			} else if kn != "-" {
				testKernelOverride = kn
			}
			rows, cols := sh[0], sh[1]
			w := randomWeights(t, typ, rows, cols, rng)
			m, err := d.UploadMatrix("w", typ, rows, cols, w)
			if err != nil {
				t.Fatal(err)
			}
			nt := 1
			if os.Getenv("VKCHAT_NT") == "8" {
				nt = 8
			}
			x, _ := d.NewBuffer("x", uint64(4*cols*nt), memDevice)
			y, _ := d.NewBuffer("y", uint64(4*rows*nt), memDevice)
			step, _ := d.NewBuffer("step", 64, memHost)
			binary.LittleEndian.PutUint32(step.Mapped(), uint32(nt))
			rec, _ := d.NewRecorder(0)
			rec.Begin()
			reps := 10
			for i := 0; i < reps; i++ {
				if err := rec.matvec(matvecOp{label: "mv", m: m, x: x, xstride: cols, y: y, ystride: rows, nt: nt, tokens: nt, step: step}); err != nil {
					t.Fatal(err)
				}
			}
			rec.End()
			rec.Run()
			best := time.Hour
			for i := 0; i < 3; i++ {
				t0 := time.Now()
				rec.Run()
				best = min(best, time.Since(t0))
			}
			per := best / time.Duration(reps)
			testKernelOverride, testRB = "", 0
			t.Logf("%s %s %5dx%4d nt%d: %v per matvec, %.2f GB/s, %.2f GFLOP/s", kn, typ, rows, cols, nt, per, float64(len(w))/per.Seconds()/1e9, 2*float64(rows*cols*nt)/per.Seconds()/1e9)
		}
	}
}

// cpuTime is this process's user+system time: with other work on the
// machine it measures a kernel's cost better than the wall clock (halved
// for the two lavapipe threads when used as a time).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestExploreCompile(t *testing.T) {
	if os.Getenv("VKCHAT_EXPLORE") == "" {
		t.Skip("set VKCHAT_EXPLORE=1")
	}
	d := openTest(t)
	for _, name := range strings.Fields(os.Getenv("VKCHAT_KERNELS")) {
		for _, nt := range []uint32{1} {
			for _, pair := range []uint32{1} {
				t0 := time.Now()
				// lpr, nu, nt, epi, norm, pair, rb
				nu := uint32(2)
				if v := os.Getenv("VKCHAT_NU"); v != "" {
					fmt.Sscan(v, &nu)
				}
				rb := uint32(2)
				if v := os.Getenv("VKCHAT_RBX"); v != "" {
					fmt.Sscan(v, &rb)
				}
				if v := os.Getenv("VKCHAT_NTX"); v != "" {
					fmt.Sscan(v, &nt)
				}
				k, err := d.Kernel(name, 11*4, 32, 8, nu, nt, 0, 1, pair, rb)
				if err != nil {
					t.Fatal(err)
				}
				t1 := time.Now()
				b, _ := d.NewBuffer("b", 1<<16, memDevice)
				args := make([]Arg, 14)
				for i := range args {
					args[i] = Arg{B: b}
				}
				for i := 0; i < 10; i++ {
					args[i].Format = fmtU32
				}
				rec, _ := d.NewRecorder(0)
				rec.Begin()
				if err := rec.Dispatch("x", k, args, make([]uint32, 11), 1, 1, 1); err != nil {
					t.Fatal(err)
				}
				rec.End()
				if err := rec.Run(); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s nt=%d pair=%d: create %v, first run %v", name, nt, pair, t1.Sub(t0), time.Since(t1))
			}
		}
	}
}
