package quant

import (
	"bytes"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// goid is the calling goroutine's id, from its stack header; tests use it
// to tell the caller's chunks from a worker's.
func goid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseInt(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// handOff runs a two-chunk ParallelRange whose chunks wait for each other
// to start, so that the caller and a worker take one each; the worker's
// chunk then sleeps helperDelay. It checks every index ran exactly once
// and reports which goroutines ran a chunk. A worker that has not reached
// its wait yet (just started, or still leaving its last job) is not
// offered the job, and the caller then runs both: it tries a few times.
func handOff(t *testing.T, helperDelay time.Duration) (callerRan, helperRan bool) {
	t.Helper()
	me := goid()
	for try := 0; try < 20 && !(callerRan && helperRan); try++ {
		callerRan, helperRan = false, false
		var started atomic.Int32
		var hits [2]atomic.Int32
		ParallelRange(2, 1, func(lo, hi int) {
			started.Add(1)
			for deadline := time.Now().Add(50 * time.Millisecond); started.Load() < 2 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			if goid() == me {
				callerRan = true
			} else {
				helperRan = true
				time.Sleep(helperDelay)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if n := hits[i].Load(); n != 1 {
				t.Fatalf("index %d ran %d times", i, n)
			}
		}
	}
	return callerRan, helperRan
}

// TestPoolHandOffs drives both ends of a hand-off past their spin: a
// caller whose helper holds the last chunk longer than spinFor must park
// and be woken by it, and a worker idle longer than spinFor must park and
// still take the next offer.
func TestPoolHandOffs(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	defer SetThreads(0)
	SetThreads(2)

	// far longer than the spin, so that a loaded machine (CI runs
	// packages side by side) cannot keep the caller off the CPU past it
	const hold = 250 * spinFor
	before := parks.callers.Load()
	if c, h := handOff(t, hold); !c || !h {
		t.Fatalf("caller ran a chunk: %v, helper ran one: %v; want both", c, h)
	}
	if parks.callers.Load() == before {
		t.Errorf("the caller did not park while its helper held the last chunk for %v", hold)
	}

	// The helper parks spinFor after its chunk, possibly before this
	// goroutine runs again, so wait for the state (a parked worker), not
	// for a park to happen after some moment; the deadline only bounds a
	// failure.
	const parkWait = 5 * time.Second
	for deadline := time.Now().Add(parkWait); parks.workers.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(spinFor)
	}
	if parks.workers.Load() == 0 {
		t.Errorf("no worker parked after %v idle", parkWait)
	}
	if c, h := handOff(t, 0); !c || !h {
		t.Fatalf("after the workers parked: caller ran a chunk: %v, helper ran one: %v; want both", c, h)
	}
}
