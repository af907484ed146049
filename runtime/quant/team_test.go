package quant

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamHandOffs is TestPoolHandOffs's drive through the team: a caller
// whose helper holds the last chunk past the spin parks and is woken, and
// a helper parked outside a step still takes the next job, in both ways
// of sharing a job.
func TestTeamHandOffs(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	defer SetThreads(0)
	defer SetTeam(TeamOn())
	SetThreads(2)
	for _, on := range []bool{true, false} {
		SetTeam(on)
		const hold = 250 * spinFor
		before := parks.callers.Load()
		if c, h := handOff(t, hold); !c || !h {
			t.Fatalf("team %v: caller ran a chunk: %v, helper ran one: %v; want both", on, c, h)
		}
		if parks.callers.Load() == before {
			t.Errorf("team %v: the caller did not park while its helper held the last chunk for %v", on, hold)
		}
		for deadline := time.Now().Add(5 * time.Second); parks.workers.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(spinFor)
		}
		if parks.workers.Load() == 0 {
			t.Errorf("team %v: no helper parked while idle", on)
		}
		if c, h := handOff(t, 0); !c || !h {
			t.Fatalf("team %v, after the helpers parked: caller ran a chunk: %v, helper ran one: %v; want both", on, c, h)
		}
	}
}

// TestTeamParksInStep: inside a step a helper polls between ops, but no
// longer than teamSpin; a step that stalls (the caller off on serial work)
// finds its helpers parked, and they still take the next job.
func TestTeamParksInStep(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	defer SetThreads(0)
	defer SetTeam(TeamOn())
	SetThreads(2)
	SetTeam(true)
	end := BeginStep()
	defer end()
	if c, h := handOff(t, 0); !c || !h {
		t.Fatalf("caller ran a chunk: %v, helper ran one: %v; want both", c, h)
	}
	for deadline := time.Now().Add(5 * time.Second); parks.workers.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(teamSpin)
	}
	if parks.workers.Load() == 0 {
		t.Fatalf("no helper parked within a step idle for far longer than %v", teamSpin)
	}
	if c, h := handOff(t, 0); !c || !h {
		t.Fatalf("after parking in a step: caller ran a chunk: %v, helper ran one: %v; want both", c, h)
	}
}

// TestTeamLateHelper: a job offered while the only helper is still in an
// earlier one (its mailbox full) runs whole on the caller, each index
// once, and the late helper then leaves its job without running anything
// twice.
func TestTeamLateHelper(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	defer SetThreads(0)
	defer SetTeam(TeamOn())
	SetThreads(2)
	SetTeam(true)
	release := make(chan struct{})
	var first [2]atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		me := goid()
		var started atomic.Int32
		ParallelRange(2, 1, func(lo, hi int) {
			started.Add(1)
			if goid() != me {
				<-release // the helper stays in this job
			} else {
				// the caller's chunk waits for the helper's to start,
				// so that it does not run both
				for deadline := time.Now().Add(time.Second); started.Load() < 2 && time.Now().Before(deadline); {
					runtime.Gosched()
				}
			}
			for i := lo; i < hi; i++ {
				first[i].Add(1)
			}
		})
	}()
	// wait until the helper holds the first job, or give up on this run
	// (a loaded machine may leave the helper out of it altogether)
	busy := false
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if team.members[0].slot.Load() != nil {
			busy = true
			break
		}
	}
	var second [64]atomic.Int32
	ParallelRange(len(second), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			second[i].Add(1)
		}
	})
	for i := range second {
		if n := second[i].Load(); n != 1 {
			t.Errorf("second job: index %d ran %d times", i, n)
		}
	}
	close(release)
	<-done
	for i := range first {
		if n := first[i].Load(); n != 1 {
			t.Errorf("first job: index %d ran %d times", i, n)
		}
	}
	if !busy {
		t.Log("the helper never took the first job; the late case was not exercised")
	}
}
