package quant

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The team: the pool's other way of sharing a job, the default (the
// hand-off through pool.work stays, SetTeam(false) or VKCHAT_CPU_TEAM=off,
// so that the two can be measured in one binary). A backend brackets each
// forward pass with BeginStep; while one runs, the helpers of the team
// take part in every parallel op of the step (each product, each
// ParallelRange: attention heads, activations) as llama.cpp's threads do
// in every graph node.
//
// Each helper has a mailbox of its own that it polls between ops: the
// caller (worker 0) publishes a job into the mailbox of every helper that
// is idle, with one store and no shared counter or channel lock, and
// takes part in the job itself, as in the hand-off. The barrier between
// ops waits only for chunks a helper has claimed, never for a helper to
// arrive: chunks are claimed one at a time from contiguous slabs and the
// caller steals the ones nobody claimed (job.runChunks), so a helper the
// OS has descheduled (another process busy on every core) holds back at
// most the one chunk it is in, not every op of the step as a barrier that
// counts its threads in would, and a helper still late from the last op
// is not offered the next one (its mailbox is not empty).
//
// A helper polls for at most teamSpin between ops, yielding the
// processor every spinPoll polls, then parks on its wake channel; outside
// a step it parks as soon as its job is done. Spinning no longer than the
// gaps of a step keeps a helper that the OS shares with another busy
// process from using its slice up waiting, so that it runs when work
// comes instead of being the thread the scheduler takes the core from.

// maxTeam bounds the helpers (SetThreads beyond it runs maxTeam+1).
const maxTeam = 255

// teamSpin is how long a helper polls its mailbox inside a step before it
// parks: longer than a decode step's gaps between parallel ops (a norm, a
// RoPE, a head's argmax), short enough that a stalled step does not keep
// a core busy for nothing.
const teamSpin = 100 * time.Microsecond

// Member states: polling (or running a job) or parked on wake.
const (
	memberAwake int32 = iota
	memberParked
)

// member is one helper of the team, on cache lines of its own so that the
// caller's stores into one mailbox do not disturb another helper's polls.
type member struct {
	_     [64]byte
	slot  atomic.Pointer[job] // the job offered, nil when idle
	state atomic.Int32        // memberAwake or memberParked
	wake  chan struct{}       // a parked helper's wake-up (capacity 1)
	_     [64]byte
}

var team struct {
	on      atomic.Bool
	steps   atomic.Int32 // forward passes running (BeginStep not yet ended)
	started atomic.Int32 // helpers running
	mu      sync.Mutex
	members [maxTeam]member
}

func init() {
	team.on.Store(os.Getenv("VKCHAT_CPU_TEAM") != "off")
}

// SetTeam chooses how jobs are shared from now on: by the team (true) or
// by the hand-off to idle pool workers (false). Results are bit-identical
// either way: the same chunks run the same arithmetic; only who runs
// which differs. Jobs already running finish the way they started.
func SetTeam(on bool) { team.on.Store(on) }

// TeamOn reports whether jobs are shared by the team.
func TeamOn() bool { return team.on.Load() }

// BeginStep marks a forward pass as running until the returned function
// is called: the team's helpers poll between its ops (teamSpin) instead
// of parking after each.
func BeginStep() (end func()) {
	team.steps.Add(1)
	return endStep
}

func endStep() { team.steps.Add(-1) }

// ensureMembers starts helpers up to n-1.
func ensureMembers(n int) {
	n = min(n-1, maxTeam)
	if int(team.started.Load()) >= n {
		return
	}
	team.mu.Lock()
	for i := int(team.started.Load()); i < n; i++ {
		m := &team.members[i]
		m.wake = make(chan struct{}, 1)
		team.started.Store(int32(i + 1))
		go m.loop()
	}
	team.mu.Unlock()
}

func (m *member) loop() {
	// as worker: a chunk's memory fault is the job caller's panic
	debug.SetPanicOnFault(true)
	for {
		j := m.await()
		if j.runChunks(int(j.joined.Add(1))) {
			j.finish()
		}
		j.release()
		m.slot.Store(nil)
	}
}

// await polls the mailbox for up to teamSpin while a step runs, then
// parks until a job is published.
func (m *member) await() *job {
	var deadline time.Time
	for i := 1; ; i++ {
		if j := m.slot.Load(); j != nil {
			return j
		}
		if i%spinPoll == 0 {
			if team.steps.Load() == 0 {
				break
			}
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(teamSpin)
			} else if now.After(deadline) {
				break
			}
			runtime.Gosched()
		}
	}
	m.state.Store(memberParked)
	if j := m.slot.Load(); j != nil {
		if m.state.CompareAndSwap(memberParked, memberAwake) {
			return j
		}
		// the publisher saw the park and is sending the wake-up: take it,
		// so that the next park does not find it waiting
		<-m.wake
		return j
	}
	parks.workers.Add(1)
	<-m.wake
	parks.workers.Add(-1)
	return m.slot.Load()
}

// offer publishes j to up to helpers idle members; each that takes it
// holds a reference that it releases when done.
func (j *job) offer(helpers int) {
	ensureMembers(helpers + 1)
	n := min(helpers, int(team.started.Load()))
	for i := 0; i < n; i++ {
		m := &team.members[i]
		if m.slot.Load() != nil {
			continue // still in an earlier job (late, or another caller's)
		}
		j.refs.Add(1)
		if !m.slot.CompareAndSwap(nil, j) {
			j.refs.Add(-1)
			continue
		}
		if m.state.Load() == memberParked && m.state.CompareAndSwap(memberParked, memberAwake) {
			m.wake <- struct{}{}
		}
	}
}
