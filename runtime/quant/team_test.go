package quant

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"vkchat/runtime/ggml"
)

// TestTeamHandOffs is TestPoolHandOffs's drive through the team: a caller
// whose helper holds the last chunk past the spin parks and is woken, and
// a helper parked outside a step still takes the next job, in both ways
// of sharing a job.
func TestTeamHandOffs(t *testing.T) {
	twoThreads(t)
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
	twoThreads(t)
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
// earlier one waits in its mailbox but runs whole on the caller, each
// index once, and the late helper then leaves its job and takes the
// waiting one without running anything twice.
func TestTeamLateHelper(t *testing.T) {
	twoThreads(t)
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
		if team.members[0].cur.Load() != nil {
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
		return
	}
	m := &team.members[0]
	for deadline := time.Now().Add(2 * time.Second); (m.slot.Load() != nil || m.cur.Load() != nil) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if m.slot.Load() != nil || m.cur.Load() != nil {
		t.Error("the late helper never took the job waiting in its mailbox, or never left it")
	}
}

// TestTeamMatchesHandOff: products shared by the team, the helpers'
// chunks through their shadows, give the hand-off's bits, for decode and
// tiled batches, packed, interleaved, K-quant and float weights, one
// product and several in a job, on the native kernels and on the portable
// Go path.
func TestTeamMatchesHandOff(t *testing.T) {
	twoThreads(t)
	r := rand.New(rand.NewPCG(40, 3))
	var ms []Matrix
	for _, c := range []struct {
		typ        ggml.Type
		rows, cols int
	}{{ggml.Q4_0, 520, 1024}, {ggml.Q4_K, 264, 1024}, {ggml.Q6_K, 264, 1024}, {ggml.F32, 100, 1024}, {ggml.Q8_0, 1000, 1024}} {
		ms = append(ms, randomMatrix(r, c.typ, c.rows, c.cols))
	}
	free, _ := Pack(ms)
	defer free()
	for i := range ms {
		ms[i] = Bind(ms[i])
	}
	defer func(was bool) { portableOnly = was }(portableOnly)
	for _, portable := range []bool{false, true} {
		portableOnly = portable
		matchHandOff(t, r, ms, portable)
	}
}

func matchHandOff(t *testing.T, r *rand.Rand, ms []Matrix, portable bool) {
	for _, n := range []int{1, 3, 40} {
		x := randVec(r, n*1024)
		run := func(team bool) [][]float32 {
			SetTeam(team)
			end := BeginStep()
			defer end()
			out := make([][]float32, len(ms)+2)
			for i, m := range ms {
				out[i] = make([]float32, n*m.Rows)
				MatMul(out[i], m, x, n)
			}
			// Q4_K and Q6_K share Q8_K activations: one job of two parts
			out[len(ms)], out[len(ms)+1] = make([]float32, n*ms[1].Rows), make([]float32, n*ms[2].Rows)
			MatMuls(out[len(ms):], ms[1:3], x, n)
			return out
		}
		want, got := run(false), run(true)
		for i := range want {
			for k := range want[i] {
				if math.Float32bits(want[i][k]) != math.Float32bits(got[i][k]) {
					t.Fatalf("portable %v, n=%d product %d element %d: team %v, hand-off %v", portable, n, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
}

// TestTeamTakesOverStalledChunk: a helper stalled in the middle of a
// chunk (as when the OS deschedules it) does not hold the product back:
// the caller takes the chunk over, the result has the hand-off's bits,
// and the helper, once it runs again, leaves the output alone; on the
// native kernels and on the portable Go path.
func TestTeamTakesOverStalledChunk(t *testing.T) {
	twoThreads(t)
	defer func(was bool) { portableOnly = was }(portableOnly)
	for _, portable := range []bool{false, true} {
		t.Run(map[bool]string{false: "native", true: "portable"}[portable], func(t *testing.T) {
			if !portable && (!formats[ggml.Q8_0].native || portableOnly) {
				t.Skip("no native kernel for Q8_0 here")
			}
			portableOnly = portable
			takeOverStalled(t)
		})
	}
}

func takeOverStalled(t *testing.T) {
	m, x, want := teamProduct(40, 4)
	end := BeginStep() // the helper polls between tries
	defer end()
	const stall = 2 * time.Second
	for try := 0; try < 50; try++ {
		var stalled atomic.Int32
		resume := make(chan struct{})
		hook := func() {
			if stalled.Add(1) == 1 {
				select { // bounded, so that a caller that waits fails, not hangs
				case <-resume:
				case <-time.After(stall):
				}
			}
		}
		shadowHook.Store(&hook)
		before := steals.Load()
		got := make([]float32, m.Rows)
		t0 := time.Now()
		MatVec(got, m, x)
		took := time.Since(t0)
		shadowHook.Store(nil)
		if stalled.Load() == 0 {
			close(resume)
			continue // the helper took no chunk this time (it was slow to wake)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
			}
		}
		if steals.Load() == before {
			t.Fatalf("the caller took no chunk over from the stalled helper")
		}
		for i := range got {
			got[i] = -7
		}
		close(resume)
		// the helper now finds its chunk taken; give it time to (wrongly)
		// copy it out
		for deadline := time.Now().Add(time.Second); team.members[0].cur.Load() != nil && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		for i := range got {
			if got[i] != -7 {
				t.Fatalf("row %d written (%v) by the helper after the caller took its chunk over", i, got[i])
			}
		}
		if took >= stall {
			t.Errorf("the product took %v: the caller waited for the stalled helper", took)
		}
		return
	}
	t.Skip("the helper never took a chunk in 50 tries (a loaded machine)")
}

// TestTeamSkipsBatches: a job started while a batch pass runs goes by the
// hand-off even with the team on, and by the team again once the batch
// ends; a decode step (BeginStep) keeps the team.
func TestTeamSkipsBatches(t *testing.T) {
	defer SetTeam(TeamOn())
	SetTeam(true)
	if !teamShares() {
		t.Fatal("team on, no batch running: a job is not shared by the team")
	}
	endStep := BeginStep()
	if !teamShares() {
		t.Error("inside a decode step: a job is not shared by the team")
	}
	endStep()
	end := BeginBatch()
	if teamShares() {
		t.Error("inside a batch pass: a job is shared by the team, want the hand-off")
	}
	end()
	if !teamShares() {
		t.Error("after the batch pass ended: a job is not shared by the team")
	}
	SetTeam(false)
	if teamShares() {
		t.Error("team off: a job is shared by the team")
	}
}

// TestTeamStaleWake: a helper woken with an empty mailbox (the offer that
// woke it published a job the helper had already taken from its polls)
// parks again rather than running a job that is not there, and still
// takes the next job published.
func TestTeamStaleWake(t *testing.T) {
	m := &member{wake: make(chan struct{}, 1)}
	got := make(chan *job, 1)
	go func() { got <- m.await() }()
	for deadline := time.Now().Add(5 * time.Second); m.state.Load() != memberParked && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if m.state.Load() != memberParked {
		t.Fatal("the helper never parked with its mailbox empty and no step running")
	}
	// the late half of an offer whose job is gone: the helper is parked,
	// so it is woken
	if !m.state.CompareAndSwap(memberParked, memberAwake) {
		t.Fatal("the helper left its park on its own")
	}
	m.wake <- struct{}{}
	select {
	case j := <-got:
		t.Fatalf("a wake-up with an empty mailbox returned %p, want the helper to park again", j)
	case <-time.After(20 * time.Millisecond):
	}
	for deadline := time.Now().Add(5 * time.Second); m.state.Load() != memberParked && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	// a real offer, as job.offer makes it
	j := &job{}
	m.slot.Store(j)
	if m.state.CompareAndSwap(memberParked, memberAwake) {
		m.wake <- struct{}{}
	}
	select {
	case g := <-got:
		if g != j {
			t.Fatalf("await returned %p, want the published job %p", g, j)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the helper never took the job published after a stale wake-up")
	}
}

// TestTeamTakenOverFaultStaysThere: a helper whose chunk the caller took
// over and which then faults on it (a late computation, thrown away)
// leaves nothing behind: the product returns the hand-off's bits, and no
// later product or range, which may run on the same recycled job, raises
// that fault. (Before, the fault stayed in the job after the caller had
// rethrown and returned, and a later, unrelated ParallelRange panicked
// with it.)
func TestTeamTakenOverFaultStaysThere(t *testing.T) {
	twoThreads(t)
	m, x, want := teamProduct(41, 4)
	end := BeginStep()
	defer end()
	for try := 0; try < 50; try++ {
		var stalled atomic.Int32
		resume := make(chan struct{})
		hook := func() {
			if stalled.Add(1) == 1 {
				select {
				case <-resume:
				case <-time.After(2 * time.Second):
				}
				panic("a late chunk's fault")
			}
		}
		shadowHook.Store(&hook)
		got := make([]float32, m.Rows)
		MatVec(got, m, x)
		shadowHook.Store(nil)
		close(resume)
		if stalled.Load() == 0 {
			continue // the helper took no chunk this time
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
			}
		}
		// let the helper fault on its taken-over chunk and let go of the job
		for deadline := time.Now().Add(5 * time.Second); team.members[0].cur.Load() != nil && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		// every job of the free list is used again, as products and ranges
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("a later job raised %v", p)
				}
			}()
			for i := 0; i < 2*cap(jobs.c); i++ {
				MatVec(got, m, x)
				ParallelRange(64, 8, func(lo, hi int) {})
			}
		}()
		return
	}
	t.Skip("the helper never took a chunk in 50 tries (a loaded machine)")
}

// twoThreads runs the test's jobs on two goroutines, a caller and one
// helper, and puts the thread count and the way of sharing back after it;
// it skips the test where there are not two Ps.
func twoThreads(t *testing.T) {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	on := TeamOn()
	t.Cleanup(func() {
		SetThreads(0)
		SetTeam(on)
	})
	SetThreads(2)
}

// teamProduct is a product for the take-over tests with its hand-off
// result; it leaves the team on.
func teamProduct(seed1, seed2 uint64) (m Matrix, x, want []float32) {
	r := rand.New(rand.NewPCG(seed1, seed2))
	m = randomMatrix(r, ggml.Q8_0, 512, 4096)
	x = randVec(r, m.Cols)
	SetTeam(false)
	want = make([]float32, m.Rows)
	MatVec(want, m, x)
	SetTeam(true)
	return m, x, want
}
