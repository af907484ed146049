package quant

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The shared pool: persistent worker goroutines that help the calling
// goroutine through a job's row chunks. The caller always works too, so a
// job never waits for a worker to wake up; workers that arrive late find no
// chunks left and just drop their reference. Nothing here allocates per job.

var pool struct {
	mu      sync.Mutex
	threads atomic.Int32 // workers including the caller
	started int          // helper goroutines running
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
	pool.mu.Lock()
	for pool.started < n-1 {
		pool.started++
		go worker()
	}
	pool.mu.Unlock()
}

func worker() {
	for j := range pool.work {
		if j.runChunks() {
			j.done <- struct{}{}
		}
		j.release()
	}
}

// job is one MatVec/MatMul split into row chunks.
type job struct {
	f        *format
	data     []byte
	rowBytes int
	rows     int
	views    []actView
	dst      []float32
	chunk    int // rows per chunk
	nchunk   int32
	next     atomic.Int32 // next chunk to hand out
	pending  atomic.Int32 // chunks not yet finished
	refs     atomic.Int32 // goroutines still holding the job
	done     chan struct{}
}

var jobPool = sync.Pool{New: func() any { return &job{done: make(chan struct{}, 1)} }}

// runChunks processes chunks until none are left; it reports whether this
// goroutine finished the job's last chunk.
func (j *job) runChunks() bool {
	for {
		c := j.next.Add(1) - 1
		if c >= j.nchunk {
			return false
		}
		lo := int(c) * j.chunk
		j.compute(lo, min(lo+j.chunk, j.rows))
		if j.pending.Add(-1) == 0 {
			return true
		}
	}
}

func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.data, j.views, j.dst, j.f = nil, nil, nil, nil
		jobPool.Put(j)
	}
}

// run computes rows [0, rows) of j on up to threads goroutines and returns
// when all are done.
func (j *job) run(threads int) {
	j.nchunk = int32((j.rows + j.chunk - 1) / j.chunk)
	helpers := min(threads-1, int(j.nchunk)-1)
	if helpers <= 0 {
		j.compute(0, j.rows)
		j.data, j.views, j.dst, j.f = nil, nil, nil, nil
		jobPool.Put(j)
		return
	}
	ensureWorkers(threads)
	j.next.Store(0)
	j.pending.Store(j.nchunk)
	j.refs.Store(1)
	for i := 0; i < helpers; i++ {
		j.refs.Add(1)
		select {
		case pool.work <- j:
		default: // every worker is busy: the caller will do the rest
			j.refs.Add(-1)
		}
	}
	if !j.runChunks() {
		<-j.done
	}
	j.release()
}
