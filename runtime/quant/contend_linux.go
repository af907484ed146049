package quant

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's id and CPU time so far (user and
// system), from CLOCK_THREAD_CPUTIME_ID: the kernel brings the running
// thread's runtime up to date before it answers. getrusage(RUSAGE_THREAD)
// does not (it reads the runtime as of the last scheduler update, up to a
// tick behind), which on a quiet machine counted a few-millisecond step as
// a fifth off its core and parked the team's helpers.
func threadCPU() (tid int, cpu time.Duration, ok bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, 0, false
	}
	return unix.Gettid(), time.Duration(ts.Nano()), true
}
