package quant

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// PackCache makes packed copies of matrices when they are first multiplied
// rather than at load, within a byte budget, dropping the least recently
// used first. It is for a mixture-of-experts model's experts: too many to
// copy at load (a 30B-A3B file is ~18 GB, nearly all experts, and loading
// must not read them all), while the few a token is routed to run on the
// unpacked kernels at a fraction of the packed ones' speed. Copies are
// found by products as Pack's are (by the matrix's data), so a product
// gives the same bits packed or not.
//
// Recency is a stamp per copy, not a list: a decode step uses a dozen
// experts per layer, and moving each to a list's front touched three cold
// cache lines per matrix; evicting scans for the oldest stamp instead,
// which happens only when the budget is full and a new copy (far costlier
// to make than the scan) comes in.
type PackCache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	clock  uint64 // one tick per Use
	items  map[*byte]*cacheItem
	// evictions counts copies dropped to keep the budget (not by Free)
	evictions atomic.Int64
}

type cacheItem struct {
	key  *byte
	p    *packedMatrix
	used uint64 // the clock of its last Use
}

// NewPackCache holds at most budget bytes of copies (0 or less: none).
func NewPackCache(budget int64) *PackCache {
	return &PackCache{budget: budget, items: map[*byte]*cacheItem{}}
}

// Use makes sure every packable matrix of ms has a packed copy, packing
// those that have none, and marks them the most recently used; it binds
// each of ms to its copy (Bind), for the products that follow. Copies
// beyond the budget are dropped, least recently used first, but never one
// of ms. A nil cache does nothing.
func (c *PackCache) Use(ms ...Matrix) {
	if c == nil || c.budget <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	var todo []*Matrix
	for i := range ms {
		m := &ms[i]
		if !packable(m) && !ownable(m) {
			*m = Bind(*m) // nothing to look up, ever
			continue
		}
		key := unsafe.SliceData(m.Data)
		if it := c.items[key]; it != nil {
			it.used = c.clock
			m.bound, m.packed = true, it.p
			continue
		}
		if p := lookupPacked(m); p != nil || int64(len(m.Data)) > c.budget {
			m.bound, m.packed = true, p // packed at load, or a copy the budget could never hold
			continue
		}
		todo = append(todo, m)
	}
	if len(todo) == 0 {
		return
	}
	packing.Lock() // as Pack: a copy is registered only once complete
	made := packAll(todo)
	packed.Lock()
	if packed.byData == nil {
		packed.byData = map[*byte]*packedEntry{}
	}
	for i, m := range todo {
		key := unsafe.SliceData(m.Data)
		packed.byData[key] = &packedEntry{p: made[i], refs: 1}
		c.items[key] = &cacheItem{key: key, p: made[i], used: c.clock}
		c.bytes += made[i].bytes()
		m.bound, m.packed = true, made[i]
	}
	packed.Unlock()
	packing.Unlock()
	c.evict(c.clock)
}

// evict drops least recently used copies until the budget holds, sparing
// those used at the clock keep or later (the matrices of the call that is
// about to run).
func (c *PackCache) evict(keep uint64) {
	for c.bytes > c.budget {
		var old *cacheItem
		for _, it := range c.items {
			if it.used < keep && (old == nil || it.used < old.used) {
				old = it
			}
		}
		if old == nil {
			return
		}
		delete(c.items, old.key)
		c.bytes -= old.p.bytes()
		if c.budget > 0 {
			c.evictions.Add(1)
		}
		packed.Lock()
		if pe := packed.byData[old.key]; pe != nil && pe.p == old.p {
			// a product that already looked it up keeps its pointer
			delete(packed.byData, old.key)
		}
		packed.Unlock()
	}
}

// Evictions is how many copies the budget has dropped so far: while it is
// 0, every copy made is still held, and a caller may keep matrices bound
// to them (Bind) instead of calling Use again. A nil cache has none.
func (c *PackCache) Evictions() int64 {
	if c == nil {
		return 0
	}
	return c.evictions.Load()
}

// Bytes is the size of the copies held now.
func (c *PackCache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Free drops every copy.
func (c *PackCache) Free() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = 0
	c.evict(c.clock + 1)
}
