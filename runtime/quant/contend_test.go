package quant

import "testing"

// TestContendedRangeStaysOnCaller: in a step of a contended team a
// ParallelRange runs whole on its caller, each index once; the team
// shares it again once quiet (TestTeamParksInStep), and the hand-off is
// left alone.
func TestContendedRangeStaysOnCaller(t *testing.T) {
	defer SetThreads(0)
	defer SetTeam(TeamOn())
	defer contention.on.Store(false)
	SetThreads(2)
	SetTeam(true)
	contention.on.Store(true)
	end := BeginStep()
	defer end()
	me := goid()
	var ran [64]int
	ParallelRange(len(ran), 1, func(lo, hi int) {
		if g := goid(); g != me {
			t.Errorf("indices %d..%d ran on goroutine %d, not the caller %d", lo, hi, g, me)
		}
		for i := lo; i < hi; i++ {
			ran[i]++
		}
	})
	for i, n := range ran {
		if n != 1 {
			t.Errorf("index %d ran %d times", i, n)
		}
	}
}
