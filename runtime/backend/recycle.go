package backend

import "sync"

// Recycler is a Backend that can reuse a logits slice its Forward returned
// once the caller is done with it. A decode step's vocabulary of logits in
// a fresh slice lands on new pages of the Go heap (between collections the
// heap hands out memory it has not touched, which the kernel faults in and
// zeroes page by page), a measurable share of a short CPU decode step
// (docs/benchmarks.md, "2026-12-05: a decode step's logits slice is handed
// back (issue 24)").
// The caller must not read or write logits after handing it back.
type Recycler interface {
	Backend
	Recycle(logits []float32)
}

// LogitsPool keeps the last slice handed back (Recycler) for the next
// Forward of one token's logits. The zero value is ready to use; it is safe
// for concurrent use.
type LogitsPool struct {
	mu    sync.Mutex
	spare []float32
}

// Get returns a slice of n floats: the one handed back, when it is large
// enough, else a new one. Its contents are whatever they were: the caller
// overwrites every element.
func (p *LogitsPool) Get(n int) []float32 {
	p.mu.Lock()
	s := p.spare
	p.spare = nil
	p.mu.Unlock()
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

// Put keeps s for the next Get.
func (p *LogitsPool) Put(s []float32) {
	p.mu.Lock()
	p.spare = s
	p.mu.Unlock()
}
