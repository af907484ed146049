package quant

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"vkchat/runtime/simd"
)

// The shared pool: persistent worker goroutines that help the calling
// goroutine through a job's chunks. The caller always works too, so a job
// never waits for a worker to wake up; workers that arrive late find no
// chunks left and just drop their reference. A job is offered only to
// workers known to be idle, so a busy machine cannot pile up offers (each of
// which keeps its job alive). Nothing here allocates per job.
//
// Hand-offs spin before they sleep. A decode step is ~80 products a few
// microseconds apart, each as short as a parked goroutine's wake-up (a
// futex round trip; docs/benchmarks.md, "cpu: what a hand-off costs (cgo
// calls, wake-ups)"): a worker that sleeps between them arrives
// when the caller has done most of the chunks, and a caller that sleeps
// waiting for the last chunk pays another wake-up. So an idle worker polls
// for the next offer, and a caller for its job's end, for up to spinFor
// before parking, as llama.cpp's thread pool spins between graph nodes.
// Between turns of a chat the workers are parked again within spinFor.

var pool struct {
	mu      sync.Mutex
	threads atomic.Int32 // goroutines per job, the caller included
	started atomic.Int32 // helper goroutines running
	idle    atomic.Int32 // workers waiting for work, minus offers not yet taken
	work    chan *job
}

func init() {
	pool.work = make(chan *job, 256)
	pool.threads.Store(int32(runtime.NumCPU()))
}

// SetThreads sets the number of goroutines, the caller included, that a
// MatVec or MatMul runs on (0 means runtime.NumCPU()). It is safe to call at
// any time; jobs already running keep the count they started with.
func SetThreads(n int) {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	pool.threads.Store(int32(n))
}

// ensureWorkers starts helpers up to n-1; idle ones cost only a parked
// goroutine, so the pool never shrinks.
func ensureWorkers(n int) {
	if int(pool.started.Load()) >= n-1 {
		return
	}
	pool.mu.Lock()
	for int(pool.started.Load()) < n-1 {
		pool.started.Add(1)
		go worker()
	}
	pool.mu.Unlock()
}

// spinFor is how long a hand-off polls before it parks: longer than the
// gaps between a step's products (norms, RoPE, attention: tens of µs),
// short enough that an idle chat costs nothing measurable.
const spinFor = 200 * time.Microsecond

// spinPoll is how many polls pass between looks at the clock and yields of
// the processor to any other runnable goroutine (the UI, the GC).
const spinPoll = 64

func worker() {
	// Chunks read mapped model weights: a fault there becomes a panic
	// that runChunks catches and hands to the job's caller.
	debug.SetPanicOnFault(true)
	for {
		pool.idle.Add(1)
		j := nextOffer()
		if j.runChunks(int(j.joined.Add(1))) {
			j.finish()
		}
		j.release()
	}
}

// nextOffer polls for a job for up to spinFor, then parks until one comes.
func nextOffer() *job {
	var j *job
	if spinUntil(func() bool {
		select {
		case j = <-pool.work:
			return true
		default:
			return false
		}
	}) {
		return j
	}
	parks.workers.Add(1)
	j = <-pool.work
	parks.workers.Add(-1)
	return j
}

// spinUntil polls ready for up to spinFor, yielding the processor to any
// other runnable goroutine every spinPoll polls; it reports whether ready
// came true.
func spinUntil(ready func() bool) bool {
	var deadline time.Time
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		if i%spinPoll == 0 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(spinFor)
			} else if now.After(deadline) {
				return false
			}
			runtime.Gosched()
		}
	}
}

// parks is for tests: workers is how many workers are parked now (a gauge,
// so a test can wait for the state rather than race the event), callers
// how many callers have parked so far.
var parks struct{ workers, callers atomic.Int64 }

// Job end states (job.state): the caller is still spinning, the caller is
// parked on done, the last chunk is finished.
const (
	jobRunning int32 = iota
	jobWaiting
	jobFinished
)

// finish marks the job's last chunk done, waking the caller only if it
// has stopped spinning.
func (j *job) finish() {
	if j.state.Swap(jobFinished) == jobWaiting {
		j.done <- struct{}{}
	}
}

// wait returns when a helper has finished the job's last chunk: it polls
// for up to spinFor, then parks on done.
func (j *job) wait() {
	if spinUntil(func() bool { return j.state.Load() == jobFinished }) {
		return
	}
	if j.state.CompareAndSwap(jobRunning, jobWaiting) {
		parks.callers.Add(1)
		t0 := time.Now()
		<-j.done
		contention.parked.Add(int64(time.Since(t0)))
	}
}

// claimIdle reserves one idle worker for an offer.
func claimIdle() bool {
	for {
		n := pool.idle.Load()
		if n <= 0 {
			return false
		}
		if pool.idle.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// job is one or more products of the same activations (MatMul, MatMuls)
// split into chunks: each part's rows in ranges, times tiles of input
// vectors, tile-major within a part. A ParallelRange job is one part whose
// rows are its range.
//
// The chunks are dealt out in slabs, one contiguous run per goroutine
// (slab), as llama.cpp's threads start at their own chunk: each goroutine
// streams its own stretch of the weights in order, which the hardware
// prefetchers follow far better than chunks that alternate between cores
// (MoE decode, whose experts are a few hundred KiB each, ran at a quarter
// of the read bound with one shared counter), and takes its chunks from a
// counter no other goroutine touches until it has run out and steals from
// the others' slabs, front first. Each goroutine counts the chunks it ran
// and subtracts them from pending once, when no chunk is left to claim:
// two atomic operations per goroutine and job on shared lines, not two
// per chunk.
type job struct {
	parts   [maxParts]part
	nparts  int
	views   []actView
	native  bool       // run the native kernels on acts
	acts    *simd.Acts // the converted activations, in native form
	fn      func(lo, hi int)
	vtile   int    // vectors per tile
	nchunk  int32  // chunks of all parts
	slabs   []slab // one per goroutine the job is offered to, the caller's first
	joined  atomic.Int32
	pending atomic.Int32  // chunks not yet finished
	refs    atomic.Int32  // goroutines still holding the job
	state   atomic.Int32  // jobRunning, jobWaiting or jobFinished
	done    chan struct{} // wakes a parked caller (jobWaiting)
	// fault is the first panic a chunk raised (a memory fault reading a
	// model file truncated under its mapping, with SetPanicOnFault on):
	// the chunk counts as done and the caller re-raises it once the job
	// ends, so a helper's fault neither kills the program nor hangs the
	// caller.
	fault atomic.Pointer[chunkPanic]
	// owned are the activations converted for this job, put back when it
	// is recycled (ownedF32: they alias the caller's x)
	owned    [maxParts]*acts
	nowned   int
	ownedF32 bool
	// steal: a team job whose chunks the caller may take over from a
	// helper (team.go), with each chunk's state (chunkFree, ...)
	steal  bool
	states []chunkState
	// callerRan is how many chunks the caller ran itself
	callerRan int32
}

type chunkPanic struct{ v any }

// slab is one goroutine's run of chunks, [next, end), on a cache line of
// its own so that its owner's claims do not bounce between cores.
type slab struct {
	next atomic.Int32
	end  int32
	_    [56]byte
}

// maxParts is the most products one job carries: a layer's Q, K and V,
// or the gate and up projections of a token's experts (top-8: 16).
const maxParts = 16

// part is one matrix of a job.
type part struct {
	f        *format
	data     []byte
	rowBytes int
	rows     int
	dst      []float32
	typ      int // ggml type id, for the native kernels (simd.F32GEMM: F32 in tinyBLAS's order)
	// dot is the portable kernel: the format's, or dotF32GEMM
	dot    func(row []byte, a *actView) float32
	packed *packedMatrix
	// views and acts, when set, are this part's own activations
	// (MatMulsEach); otherwise the job's
	views   []actView
	acts    *simd.Acts
	chunk   int   // rows per chunk
	rchunks int   // row chunks per tile
	first   int32 // the job's index of this part's first chunk
}

// freeList recycles jobs and activation buffers. Unlike sync.Pool it is not
// emptied by garbage collections, so a steady stream of products allocates
// nothing; it holds only what was put back, at most its capacity.
type freeList[T any] struct {
	c    chan *T
	make func() *T
}

func (f *freeList[T]) get() *T {
	select {
	case v := <-f.c:
		return v
	default:
		return f.make()
	}
}

func (f *freeList[T]) put(v *T) {
	select {
	case f.c <- v:
	default:
	}
}

// A job stays alive until its last offer is taken, so at most about one per
// worker and caller is in use at a time.
var jobs = freeList[job]{make(chan *job, 64), func() *job { return &job{done: make(chan struct{}, 1)} }}

func (j *job) chunkAt(c int) {
	p, lo, hi, v0, v1 := j.chunkRange(c)
	j.compute(p, lo, hi, v0, v1)
}

// chunkRange is chunk c's part, rows and vectors.
func (j *job) chunkRange(c int) (p *part, lo, hi, v0, v1 int) {
	p = &j.parts[0]
	for i := 1; i < j.nparts && int32(c) >= j.parts[i].first; i++ {
		p = &j.parts[i]
	}
	c -= int(p.first)
	t, rc := c/p.rchunks, c%p.rchunks
	lo = rc * p.chunk
	v0 = t * j.vtile
	return p, lo, min(lo+p.chunk, p.rows), v0, min(v0+j.vtile, len(j.views))
}

// runChunks processes chunks until none are left, its own slab (self
// modulo the slabs) first, then the others'; it reports whether this
// goroutine finished the job's last chunk.
func (j *job) runChunks(self int) bool {
	n := len(j.slabs)
	ran := int32(0)
	for k := 0; k < n; k++ {
		s := &j.slabs[(self+k)%n]
		for c := s.next.Add(1) - 1; c < s.end; c = s.next.Add(1) - 1 {
			if j.steal {
				// the caller's own: never taken over (team.go)
				j.states[c].v.Store(chunkTaken)
			}
			j.safeChunk(int(c))
			ran++
		}
	}
	if self == 0 {
		j.callerRan = ran
	}
	return ran > 0 && j.pending.Add(-ran) == 0
}

// safeChunk runs chunk c, keeping a panic in it for the caller.
func (j *job) safeChunk(c int) {
	defer func() {
		if r := recover(); r != nil {
			j.fault.CompareAndSwap(nil, &chunkPanic{r})
		}
	}()
	j.chunkAt(c)
}

// rethrow raises, on the caller's goroutine, a panic a chunk raised, after
// releasing the job.
func (j *job) rethrow() {
	f := j.fault.Swap(nil)
	j.release()
	if f != nil {
		panic(f.v)
	}
}

func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.recycle()
	}
}

func (j *job) recycle() {
	for _, a := range j.owned[:j.nowned] {
		if j.ownedF32 {
			a.f = nil // it aliased x
		}
		actsFree.put(a)
	}
	j.owned, j.nowned = [maxParts]*acts{}, 0
	// a fault belongs to the run that raised it (rethrow takes it): one
	// left here would be raised by the job's next, unrelated run
	j.fault.Store(nil)
	j.parts = [maxParts]part{}
	j.views, j.acts, j.fn = nil, nil, nil
	jobs.put(j)
}

// run computes all chunks of j on up to threads goroutines and returns when
// they are done.
func (j *job) run(threads int) {
	j.steal = false
	ntiles := (len(j.views) + j.vtile - 1) / j.vtile
	j.nchunk = 0
	for i := range j.nparts {
		p := &j.parts[i]
		p.rchunks = (p.rows + p.chunk - 1) / p.chunk
		p.first = j.nchunk
		j.nchunk += int32(p.rchunks * ntiles)
	}
	helpers := min(threads-1, int(j.nchunk)-1)
	if helpers <= 0 {
		j.slabs = j.slabs[:0]
		for c := 0; c < int(j.nchunk); c++ {
			j.safeChunk(c)
		}
		f := j.fault.Swap(nil)
		j.recycle()
		if f != nil {
			panic(f.v)
		}
		return
	}
	j.deal(helpers + 1)
	j.joined.Store(0)
	j.pending.Store(j.nchunk)
	j.refs.Store(1)
	j.state.Store(jobRunning)
	if teamShares() {
		j.prepareSteal()
		j.offer(helpers) // team.go
		t0 := time.Now()
		if !j.runChunks(0) {
			j.waitSteal(time.Since(t0))
		}
		j.rethrow()
		return
	}
	ensureWorkers(threads)
	for i := 0; i < helpers && claimIdle(); i++ {
		j.refs.Add(1)
		pool.work <- j // offers never outnumber waiting workers, so this is prompt
	}
	if !j.runChunks(0) {
		j.wait()
	}
	j.rethrow()
}

// deal splits the job's chunks into n contiguous slabs of near-equal
// counts.
func (j *job) deal(n int) {
	if cap(j.slabs) < n {
		j.slabs = make([]slab, n)
	}
	j.slabs = j.slabs[:n]
	for i := range j.slabs {
		s := &j.slabs[i]
		s.next.Store(int32(int64(i) * int64(j.nchunk) / int64(n)))
		s.end = int32(int64(i+1) * int64(j.nchunk) / int64(n))
	}
}

// oneTile is the single "vector" of a ParallelRange job.
var oneTile = []actView{{}}

// ParallelRange runs fn over [0, n) in chunks of about grain on the shared
// pool, the calling goroutine included, and returns when all are done: for
// the element-wise work between products (activations), so the second core
// does not idle through it; in a step of a contended team, on the caller
// alone (contend.go). fn must be safe to run concurrently on disjoint
// ranges.
func ParallelRange(n, grain int, fn func(lo, hi int)) {
	threads := min(int(pool.threads.Load()), runtime.GOMAXPROCS(0))
	if n <= 0 {
		return
	}
	if threads > 1 && contended() && teamShares() {
		threads = 1 // contend.go
	}
	if threads <= 1 || n < 2*grain {
		fn(0, n)
		return
	}
	j := jobs.get()
	j.fn, j.views, j.vtile, j.nparts = fn, oneTile, 1, 1
	j.parts[0].rows = n
	j.parts[0].chunk = max(grain, (n+2*threads-1)/(2*threads))
	j.run(threads)
}
