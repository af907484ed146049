package quant

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU is the calling thread's id and CPU time so far (user and
// system).
func threadCPU() (tid int, cpu time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0, 0, false
	}
	return syscall.Gettid(), time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
