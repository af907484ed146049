package quant

import (
	"container/list"
	"sync"
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
type PackCache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	lru    *list.List // of *cacheItem, most recently used first
	items  map[*byte]*list.Element
}

type cacheItem struct {
	key *byte
	p   *packedMatrix
}

// NewPackCache holds at most budget bytes of copies (0 or less: none).
func NewPackCache(budget int64) *PackCache {
	return &PackCache{budget: budget, lru: list.New(), items: map[*byte]*list.Element{}}
}

// Use makes sure every packable matrix of ms has a packed copy, packing
// those that have none, and marks them the most recently used. Copies
// beyond the budget are dropped, least recently used first, but never one
// of ms. A nil cache does nothing.
func (c *PackCache) Use(ms ...Matrix) {
	if c == nil || c.budget <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var todo []*Matrix
	for i := range ms {
		m := &ms[i]
		if !packable(m) {
			continue
		}
		key := unsafe.SliceData(m.Data)
		if e := c.items[key]; e != nil {
			c.lru.MoveToFront(e)
			continue
		}
		if lookupPacked(m) != nil || int64(len(m.Data)) > c.budget {
			continue // packed at load, or a copy the budget could never hold
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
		c.items[key] = c.lru.PushFront(&cacheItem{key: key, p: made[i]})
		c.bytes += int64(len(made[i].data))
	}
	packed.Unlock()
	packing.Unlock()
	c.evict(len(ms))
}

// evict drops least recently used copies until the budget holds, sparing
// the keep most recent (the matrices of the call that is about to run).
func (c *PackCache) evict(keep int) {
	for c.bytes > c.budget && c.lru.Len() > keep {
		e := c.lru.Back()
		it := e.Value.(*cacheItem)
		c.lru.Remove(e)
		delete(c.items, it.key)
		c.bytes -= int64(len(it.p.data))
		packed.Lock()
		if pe := packed.byData[it.key]; pe != nil && pe.p == it.p {
			// a product that already looked it up keeps its pointer
			delete(packed.byData, it.key)
		}
		packed.Unlock()
	}
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
	c.evict(0)
}
