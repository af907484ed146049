package quant

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestContentionFollowsOffCoreTime: steps whose thread sleeps through most
// of their wall time (as one the kernel has descheduled) make the team
// contended within a window, steps that park as long waiting for a helper
// do not; windows mostly on the core, and those at the threshold, make it
// quiet again; a window shorter than contendWindow judges nothing;
// outside a step nothing counts as contended; ContentionWindows counts
// the windows judged and those judged contended.
func TestContentionFollowsOffCoreTime(t *testing.T) {
	if _, _, ok := threadCPU(); !ok {
		t.Skip("no per-thread CPU time on this system")
	}
	c := &contention
	defer c.on.Store(false)
	c.mu.Lock()
	c.wall, c.off = 0, 0
	c.on.Store(false)
	c.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const nap = 5 * time.Millisecond
	for deadline := time.Now().Add(10 * contendWindow); !c.on.Load() && time.Now().Before(deadline); {
		end := BeginStep()
		// the thread itself blocks (not the goroutine): off its core, as
		// under another busy process
		ts := syscall.NsecToTimespec(int64(nap))
		_ = syscall.Nanosleep(&ts, nil)
		end()
	}
	if !c.on.Load() {
		t.Fatalf("steps asleep for %v each, for %v: not contended", nap, 10*contendWindow)
	}
	end := BeginStep()
	if !contended() {
		t.Error("contended, but not inside a step")
	}
	end()
	if contended() {
		t.Error("contended outside a step")
	}
	// the same naps as a caller's parks waiting for a helper (job.wait)
	// are the step's own doing, not the kernel's
	for deadline := time.Now().Add(10 * contendWindow); c.on.Load() && time.Now().Before(deadline); {
		end := BeginStep()
		t0 := time.Now()
		ts := syscall.NsecToTimespec(int64(nap))
		_ = syscall.Nanosleep(&ts, nil)
		c.parked.Add(int64(time.Since(t0)))
		end()
	}
	if c.on.Load() {
		t.Fatalf("steps parked waiting for helpers for %v: still contended", 10*contendWindow)
	}

	// the judgment itself, on steps of given wall and off-core time
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall, c.off = 0, 0
	c.on.Store(true)
	judged0, contended0 := ContentionWindows()
	c.record(contendWindow/2, 0)
	if !c.on.Load() {
		t.Error("half a window on the core changed the judgment before the window ended")
	}
	c.record(contendWindow/2, 0)
	if c.on.Load() {
		t.Error("a window all on the core: still contended")
	}
	c.record(contendWindow, time.Duration(contendOff*float64(contendWindow)))
	if c.on.Load() {
		t.Errorf("a window %.0f%% off the core (the threshold): contended", 100*contendOff)
	}
	c.record(contendWindow, contendWindow/2)
	if !c.on.Load() {
		t.Error("a window half off the core: not contended")
	}
	c.record(contendWindow, -contendWindow) // a clock step: counts as on the core
	if c.on.Load() {
		t.Error("a step with more CPU time than wall time counted as off the core")
	}
	if judged, contended := ContentionWindows(); judged-judged0 != 4 || contended-contended0 != 1 {
		t.Errorf("ContentionWindows counted %d judged, %d contended; want 4, 1", judged-judged0, contended-contended0)
	}
}

// TestQuietStepsStayOnCore: steps that compute on their thread all along,
// a few milliseconds each as a small model's decode steps, are not judged
// contended. The thread's CPU time must be current when a step ends: read
// as of the scheduler's last update (getrusage), such steps came out a
// fifth or more off their core on a quiet machine. On a machine busy with
// other work a window may be contended for real, so the test asks for
// most windows quiet, not all, and says nothing when its thread had less
// than nine tenths of its wall time on the core over the whole run (a
// span long enough for any clock's lag not to matter).
func TestQuietStepsStayOnCore(t *testing.T) {
	if _, _, ok := threadCPU(); !ok {
		t.Skip("no per-thread CPU time on this system")
	}
	c := &contention
	defer c.on.Store(false)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	j0, c0 := ContentionWindows()
	_, cpu0, _ := threadCPU()
	wall0 := time.Now()
	x := 1.0
	for deadline := time.Now().Add(20 * contendWindow); time.Now().Before(deadline); {
		end := BeginStep()
		for spin := time.Now().Add(3 * time.Millisecond); time.Now().Before(spin); {
			x = x*1.0000001 + 1e-9
		}
		end()
		// a gap between steps, as sampling and the next token's set-up
		for spin := time.Now().Add(300 * time.Microsecond); time.Now().Before(spin); {
			x = x*1.0000001 + 1e-9
		}
	}
	j1, c1 := ContentionWindows()
	_, cpu1, _ := threadCPU()
	if on, wall := cpu1-cpu0, time.Since(wall0); float64(on) < 0.9*float64(wall) {
		t.Skipf("the machine is busy: the test's thread ran %v of %v", on, wall)
	}
	judged, contended := j1-j0, c1-c0
	if judged < 10 {
		t.Fatalf("%d windows judged over %v of steps", judged, 20*contendWindow)
	}
	if contended*4 > judged {
		t.Errorf("steps computing on their core: %d of %d windows judged contended (x %g)", contended, judged, x)
	}
}
