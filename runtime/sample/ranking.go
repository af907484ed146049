package sample

import (
	"math/bits"
	"slices"
)

// ranking orders token ids by logit, best first, but only as far as the
// chain asks. Every filter in the chain keeps a prefix of this order, and
// with the usual settings that prefix is a few dozen tokens out of a
// vocabulary of up to ~152k, so a full sort per token would waste most of
// the step.
//
// Ties are broken by the lower id so that the order is a strict total one:
// results are then reproducible, and greedy picks the lowest id on a tie.
type ranking struct {
	logits []float32 // NaN-free, so comparisons are total
	idx    []int32   // idx[:sorted] holds the best ids, in order
	sorted int
	// tailValid says idx[sorted:] holds the remaining ids (in any order),
	// so a longer prefix can be selected from it alone.
	tailValid bool
}

// heapSelectMax is the largest prefix found by a single pass with a
// bounded heap. That pass touches the logits in order and rejects most
// tokens with one comparison, which beats partitioning for small prefixes;
// larger ones use quickselect.
const heapSelectMax = 256

func (r *ranking) reset(logits []float32) {
	r.logits = logits
	r.sorted = 0
	r.tailValid = false
	if cap(r.idx) < len(logits) {
		r.idx = make([]int32, len(logits))
	}
	r.idx = r.idx[:len(logits)]
}

func (r *ranking) better(a, b int32) bool {
	la, lb := r.logits[a], r.logits[b]
	return la > lb || (la == lb && a < b)
}

// top returns the n best ids, best first (fewer if the vocabulary is
// smaller). The slice is only valid until the next reset.
func (r *ranking) top(n int) []int32 {
	n = min(n, len(r.logits))
	if n <= r.sorted {
		return r.idx[:n]
	}
	// A fresh heap pass is cheaper than partitioning while n is small,
	// even if a shorter prefix is already sorted.
	if n <= heapSelectMax {
		r.heapSelect(n)
		r.sorted = n
		r.tailValid = false
		return r.idx[:n]
	}
	if !r.tailValid {
		r.rebuildTail()
	}
	// Sort a little more than asked: callers that walk the order (top-p)
	// extend it step by step, and each extension costs a pass over the
	// tail.
	want := min(max(n, 4*r.sorted), len(r.logits))
	tail := r.idx[r.sorted:]
	r.selectFront(tail, want-r.sorted)
	slices.SortFunc(tail[:want-r.sorted], r.compare)
	r.sorted = want
	return r.idx[:n]
}

// rebuildTail fills idx[sorted:] with every id not in the sorted prefix.
// The prefix holds exactly the ids that rank before its last one, so
// membership needs no marks.
func (r *ranking) rebuildTail() {
	tail := r.idx[:r.sorted]
	if r.sorted == 0 {
		for id := range int32(len(r.logits)) {
			tail = append(tail, id)
		}
	} else {
		last := r.idx[r.sorted-1]
		for id := range int32(len(r.logits)) {
			if r.better(last, id) {
				tail = append(tail, id)
			}
		}
	}
	r.tailValid = true
}

// heapSelect puts the n best ids, in order, in idx[:n] using a min-heap
// whose root is the worst id kept so far.
func (r *ranking) heapSelect(n int) {
	lg := r.logits
	h := r.idx[:0]
	id := 0
	for ; id < len(lg) && len(h) < n; id++ {
		h = append(h, int32(id))
		r.siftUp(h, len(h)-1)
	}
	if len(h) > 0 {
		// Ids arrive in increasing order, so a later id that ties the
		// root ranks below it: only a strictly greater logit gets in.
		// Comparing against a cached value keeps this loop, which sees
		// every token, free of the indirect loads.
		worst := lg[h[0]]
		for ; id < len(lg); id++ {
			if lg[id] > worst {
				h[0] = int32(id)
				r.siftDown(h, 0)
				worst = lg[h[0]]
			}
		}
	}
	// Pop worst-first into the tail, leaving h sorted best-first.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		r.siftDown(h[:end], 0)
	}
}

func (r *ranking) siftUp(h []int32, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !r.better(h[parent], h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (r *ranking) siftDown(h []int32, i int) {
	for {
		worst := i
		l, rt := 2*i+1, 2*i+2
		if l < len(h) && r.better(h[worst], h[l]) {
			worst = l
		}
		if rt < len(h) && r.better(h[worst], h[rt]) {
			worst = rt
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

func (r *ranking) compare(a, b int32) int {
	switch {
	case r.better(a, b):
		return -1
	case r.better(b, a):
		return 1
	}
	return 0
}

// selectFront rearranges ids so that ids[:n] are the n best, in any order
// (quickselect). A depth limit guards against adversarial inputs that make
// median-of-three pivots degrade to quadratic time.
func (r *ranking) selectFront(ids []int32, n int) {
	if n <= 0 || n >= len(ids) {
		return
	}
	depth := 2 * bits.Len(uint(len(ids)))
	lo, hi := 0, len(ids)
	for hi-lo > 16 {
		if depth == 0 {
			slices.SortFunc(ids[lo:hi], r.compare)
			return
		}
		depth--
		p := r.partition(ids[lo:hi]) + lo
		switch {
		case p == n:
			return
		case p < n:
			lo = p + 1
		default:
			hi = p
		}
	}
	slices.SortFunc(ids[lo:hi], r.compare)
}

// partition orders ids around a median-of-three pivot and returns the
// pivot's final index: everything before it is better.
func (r *ranking) partition(ids []int32) int {
	last := len(ids) - 1
	mid := last / 2
	if r.better(ids[mid], ids[0]) {
		ids[mid], ids[0] = ids[0], ids[mid]
	}
	if r.better(ids[last], ids[0]) {
		ids[last], ids[0] = ids[0], ids[last]
	}
	if r.better(ids[last], ids[mid]) {
		ids[last], ids[mid] = ids[mid], ids[last]
	}
	// ids[mid] is now the median; park it at the end as the pivot.
	ids[mid], ids[last] = ids[last], ids[mid]
	pivot := ids[last]
	store := 0
	for i := range last {
		if r.better(ids[i], pivot) {
			ids[i], ids[store] = ids[store], ids[i]
			store++
		}
	}
	ids[store], ids[last] = ids[last], ids[store]
	return store
}
