package quant

import (
	"sync"
	"sync/atomic"
	"time"
)

// Contention: another process busy on every core. Its threads and ours
// share the cores by the kernel's fair share, so each of a step's threads
// runs only part of the time, at moments the kernel picks. A product's
// chunk that a descheduled helper holds is taken over (team.go), but a
// ParallelRange's cannot be (its function may write anything), and the
// caller would wait for the rest of the helper's time slice, parked, out
// of the kernel's run queue; ParallelRange's jobs between the products (an
// activation, a layer's attention heads) are short beside that. And a
// helper polling for the next op spends the share of the core the kernel
// gives it on nothing while its caller is descheduled, the time slices
// that would run its chunks. So while the caller's thread spends a good
// part of each step off its core, the team runs ParallelRange on the
// caller alone and its helpers park as soon as their job is done (each
// op's offer wakes them), and it goes back to sharing everything and
// polling once steps run on their core again. (Widening the team past the cores under
// contention, to get more of the kernel's fair share, was measured too:
// the caller, which alone drives the step, got no more of its core, and
// decode was slower.)
//
// A step's time off its core is its wall time less its thread's CPU time
// (threadCPU) and less the time its caller parked waiting for a helper
// (job.wait: the step's own choice, as when a helper runs a long chunk of
// attention at depth), read where the step begins and ends on the same
// thread (a caller that moved to another thread leaves its step
// unmeasured), summed over steps until contendWindow of wall time has
// passed.

// contendWindow is the least wall time of steps judged together: longer
// than a few time slices, so that one preemption by a daemon does not
// flip the team, short enough to follow a load that starts or stops
// within a reply.
const contendWindow = 50 * time.Millisecond

// contendOff is the share of a window's wall time off the core above
// which the team counts as contended: a quiet step runs on its core all
// along (the caller spins, it does not sleep, between ops), a step beside
// one other busy thread per core is off about half the time.
const contendOff = 0.2

var contention contendState

type contendState struct {
	on atomic.Bool // the team is contended
	// parked is the time callers have parked in job.wait, in nanoseconds
	parked atomic.Int64
	mu     sync.Mutex
	// the step being measured: its thread and where it started
	tid       int
	cpu0      time.Duration
	wall0     time.Time
	parked0   int64
	measuring bool
	// the window so far
	wall, off time.Duration
	// windows judged, and of them contended, so far
	judged, contendedWindows atomic.Int64
}

// ContentionWindows reports how many windows of decode steps the team
// has judged so far, and how many of them contended: the bench says how
// often the team ran as contended beside its figures.
func ContentionWindows() (judged, contended int64) {
	return contention.judged.Load(), contention.contendedWindows.Load()
}

// contended reports whether a step runs and the team is contended.
func contended() bool {
	return contention.on.Load() && team.steps.Load() > 0
}

// stepBegan starts measuring the step the calling goroutine begins.
func stepBegan() {
	tid, cpu, ok := threadCPU()
	if !ok {
		return
	}
	c := &contention
	c.mu.Lock()
	c.tid, c.cpu0, c.wall0, c.parked0, c.measuring = tid, cpu, time.Now(), c.parked.Load(), true
	c.mu.Unlock()
}

// stepEnded ends the step stepBegan measured, if the calling goroutine is
// still on its thread, and judges the window once it is long enough.
func stepEnded() {
	tid, cpu, ok := threadCPU()
	if !ok {
		return
	}
	c := &contention
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.measuring || tid != c.tid {
		c.measuring = false
		return
	}
	c.measuring = false
	wall := time.Since(c.wall0)
	c.record(wall, wall-(cpu-c.cpu0)-time.Duration(c.parked.Load()-c.parked0))
}

// record adds a step of wall time, off of it off its core, to the window
// and judges the window once it is long enough; c.mu is held.
func (c *contendState) record(wall, off time.Duration) {
	c.wall += wall
	c.off += max(0, off)
	if c.wall >= contendWindow {
		on := float64(c.off) > contendOff*float64(c.wall)
		c.on.Store(on)
		c.judged.Add(1)
		if on {
			c.contendedWindows.Add(1)
		}
		c.wall, c.off = 0, 0
	}
}
