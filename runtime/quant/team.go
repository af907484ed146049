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
// caller (worker 0) publishes a job into the mailbox of every helper whose
// mailbox is empty, with one store and no shared counter or channel lock,
// and takes part in the job itself, as in the hand-off. A helper empties
// its mailbox as it starts a job, so the mailbox holds at most one job
// waiting behind the one it runs. The barrier between ops waits only for
// chunks a helper has claimed, never for a helper to arrive: chunks are
// claimed one at a time from contiguous slabs and the caller steals the
// ones nobody claimed (job.runChunks), so a helper the OS has descheduled
// (another process busy on every core) holds back at most the one chunk it
// is in, not every op of the step as a barrier that counts its threads in
// would, and a helper still late from the last op is offered the next one
// but not the one after (its mailbox is full).
//
// A helper polls for at most teamSpin between ops, yielding the processor
// every spinPoll polls, then parks on its wake channel; outside a step, or
// in one of a contended team (contend.go), it parks as soon as its job is
// done. Spinning no longer than the gaps of a step keeps a helper that the
// OS shares with another busy process from using its slice up waiting, so
// that it runs when work comes instead of being the thread the scheduler
// takes the core from.

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
	slot  atomic.Pointer[job] // the job offered and not yet taken
	cur   atomic.Pointer[job] // the job being run, nil between jobs
	state atomic.Int32        // memberAwake or memberParked
	wake  chan struct{}       // a parked helper's wake-up (capacity 1)
	// shadow is where this helper computes a chunk the caller may take
	// over (runShadowed), laid out as the part's dst
	shadow []float32
	_      [64]byte
}

var team struct {
	on      atomic.Bool
	steps   atomic.Int32 // forward passes running (BeginStep not yet ended)
	batches atomic.Int32 // batch passes running (BeginBatch not yet ended)
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
// of parking after each. The calling goroutine runs the step, and the
// returned function is called on it: the step's time off its core tells
// whether the team is contended (contend.go).
func BeginStep() (end func()) {
	if team.steps.Add(1) == 1 {
		stepBegan()
	}
	return endStep
}

func endStep() {
	if team.steps.Load() == 1 {
		stepEnded()
	}
	team.steps.Add(-1)
}

// BeginBatch marks a pass over a batch of tokens (a prefill, a
// verification) as running until the returned function is called: while
// one runs, jobs are shared by the hand-off, not the team. A batch's
// tiled products are long, so one hand-off per product costs little
// there, while the team's take-over (each helper's chunk computed into
// its shadow, then copied) costs on every chunk; a decode step is the
// opposite (docs/benchmarks.md, "2026-12-07: CPU thread team against
// the hand-off (issue 40, item 3)").
func BeginBatch() (end func()) {
	team.batches.Add(1)
	return endBatch
}

func endBatch() { team.batches.Add(-1) }

// teamShares reports whether a job starting now is shared by the team.
func teamShares() bool { return team.on.Load() && team.batches.Load() == 0 }

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
		// the mailbox takes the next job while this one runs, so that a
		// helper still finishing its last chunk (or its bookkeeping) when
		// the caller starts the next op joins it right after, instead of
		// the caller running that op alone
		m.cur.Store(j)
		m.slot.Store(nil)
		self := int(j.joined.Add(1))
		if j.steal {
			if j.runShadowed(self, m) {
				j.finish()
			}
		} else if j.runChunks(self) {
			j.finish()
		}
		j.release()
		m.cur.Store(nil)
	}
}

// await polls the mailbox for up to teamSpin while a step runs, then
// parks until a job is published. A wake-up may find the mailbox empty:
// the offer that sent it published a job this helper has already taken
// (and finished) from its polls, and then found it parked again; it polls
// and parks anew.
func (m *member) await() *job {
	for {
		if j := m.awaitOnce(); j != nil {
			return j
		}
	}
}

// awaitOnce is one poll and park of await; nil after a stale wake-up.
func (m *member) awaitOnce() *job {
	var deadline time.Time
	for i := 1; ; i++ {
		if j := m.slot.Load(); j != nil {
			return j
		}
		if i%spinPoll == 0 {
			if team.steps.Load() == 0 || contended() {
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

// offer publishes j to up to helpers members whose mailbox is empty; each
// that takes it holds a reference that it releases when done.
func (j *job) offer(helpers int) {
	ensureMembers(helpers + 1)
	n := min(helpers, int(team.started.Load()))
	for i := 0; i < n; i++ {
		m := &team.members[i]
		if m.slot.Load() != nil {
			continue // an earlier job still waits for it (late, or another caller's)
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

// Taking over a helper's chunk. A helper the OS has descheduled in the
// middle of a chunk (another process busy on every core) would hold the op
// back for the rest of its time slice, milliseconds, while the caller
// waits. So in a product job of the team the helpers compute each chunk
// into a shadow of the output of their own and copy it out only if they
// still own the chunk when done; a caller that has waited past stealAfter,
// and twice as long as one of its own chunks took, takes the chunks still
// out and computes them itself, straight into the output: a helper that
// runs finishes the chunk it holds within about one chunk's time of the
// caller's last, while a descheduled one would keep the caller waiting for
// the rest of its time slice. Either way each output element is computed
// once into the output by the same kernel call on the same activations
// (the shadow is only a different destination), so results are
// bit-identical to the hand-off's; a helper that loses its chunk throws
// its shadow away and never writes the output after the caller moved on.
// The job keeps its activations until the last helper lets go of it
// (recycle), since a losing helper may still read them.

// Chunk states of a stealable job.
const (
	chunkFree  int32 = iota // claimed from a slab, not started by a helper
	chunkHeld               // a helper computing it into its shadow
	chunkTaken              // done or being done for good (the caller's own, a helper's copied out, or taken over)
)

// chunkState is a chunk's state on a cache line of its own: the caller
// marks its chunks while a helper marks the neighbouring ones.
type chunkState struct {
	v atomic.Int32
	_ [60]byte
}

// stealAfter is the least a caller waits for a helper's chunk before
// taking it over.
const stealAfter = 20 * time.Microsecond

// maxShadow bounds a helper's shadow, in floats; a product whose output
// is larger (the head of a long batch's every row) is not taken over.
const maxShadow = 1 << 20

// prepareSteal decides whether j's chunks may be taken over: a product,
// native or on the portable Go path (both read the weights and the
// activations only and write nothing but the chunk's output; a
// ParallelRange's function may write anything, so it is left alone), whose
// output fits a shadow.
func (j *job) prepareSteal() {
	if j.fn != nil {
		return
	}
	for i := range j.nparts {
		if len(j.views)*j.parts[i].rows > maxShadow {
			return
		}
	}
	if cap(j.states) < int(j.nchunk) {
		j.states = make([]chunkState, j.nchunk)
	} else {
		j.states = j.states[:j.nchunk]
		for i := range j.states {
			j.states[i].v.Store(chunkFree)
		}
	}
	j.steal = true
}

// runShadowed is runChunks for a helper of a stealable job: each chunk
// it claims is computed into m's shadow and copied out only if the
// caller has not taken it over meanwhile.
func (j *job) runShadowed(self int, m *member) bool {
	n := len(j.slabs)
	ran := int32(0)
	for k := 0; k < n; k++ {
		s := &j.slabs[(self+k)%n]
		for c := s.next.Add(1) - 1; c < s.end; c = s.next.Add(1) - 1 {
			if !j.states[c].v.CompareAndSwap(chunkFree, chunkHeld) {
				continue // taken over before it started
			}
			p, lo, hi, v0, v1 := j.chunkRange(int(c))
			m.shadow = grow(m.shadow, len(j.views)*p.rows)
			fault := j.safeCompute(p, m.shadow, lo, hi, v0, v1)
			if !j.states[c].v.CompareAndSwap(chunkHeld, chunkTaken) {
				// the caller took it over and wrote it: what this
				// computation raised is thrown away with its result, as
				// the caller may have returned (and rethrown) already
				continue
			}
			if fault != nil {
				j.fault.CompareAndSwap(nil, fault)
			} else {
				for v := v0; v < v1; v++ {
					copy(p.dst[v*p.rows+lo:v*p.rows+hi], m.shadow[v*p.rows+lo:v*p.rows+hi])
				}
			}
			ran++
		}
	}
	return ran > 0 && j.pending.Add(-ran) == 0
}

// safeCompute is safeChunk for a shadowed chunk: it returns what the
// chunk raised rather than keeping it in the job, since the chunk may
// have been taken over meanwhile. shadowHook runs inside it, after the
// chunk.
func (j *job) safeCompute(p *part, out []float32, lo, hi, v0, v1 int) (fault *chunkPanic) {
	defer func() {
		if r := recover(); r != nil {
			fault = &chunkPanic{r}
		}
	}()
	j.computeInto(p, out, lo, hi, v0, v1)
	if h := shadowHook.Load(); h != nil {
		(*h)()
	}
	return nil
}

// waitSteal is wait for the caller of a team job whose own chunks took
// mine: past max(stealAfter, twice its time per chunk) it takes over
// every chunk still out.
func (j *job) waitSteal(mine time.Duration) {
	if !j.steal {
		j.wait()
		return
	}
	deadline := time.Now().Add(max(stealAfter, 2*mine/time.Duration(max(j.callerRan, 1))))
	for i := 1; ; i++ {
		if j.state.Load() == jobFinished {
			return
		}
		if i%spinPoll == 0 && time.Now().After(deadline) {
			break
		}
	}
	for c := range j.states {
		st := &j.states[c].v
		for s := st.Load(); s != chunkTaken; s = st.Load() {
			if st.CompareAndSwap(s, chunkTaken) {
				steals.Add(1)
				j.safeChunk(c)
				if j.pending.Add(-1) == 0 {
					return
				}
				break
			}
		}
	}
	// what is left are helpers' chunks being copied out
	j.wait()
}

// steals counts chunks callers took over, and shadowHook, when set, runs
// after each shadowed chunk before its helper tries to copy it out (inside
// safeCompute, so that what it raises counts as the chunk's): for tests,
// which stall a helper there as the OS would, or fault.
var (
	steals     atomic.Int64
	shadowHook atomic.Pointer[func()]
)
