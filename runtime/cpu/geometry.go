package cpu

import "vkchat/runtime/arch"

// widths is the largest per-layer size of each activation: layers may
// differ in head size, KV heads and FF width (gemma4), and the scratch and
// attention buffers are made once for the widest.
type widths struct {
	q, kv, ff  int // heads × head dim, kv heads × head dim, FF
	hd, kvHead int // head dim, kv heads
}

func widest(m *arch.Model) widths {
	w := widths{q: m.Heads * m.HeadDim, kv: m.KVHeads * m.HeadDim, ff: m.FF, hd: m.HeadDim, kvHead: m.KVHeads}
	for i := range m.Layers {
		lc := &m.Layers[i].Config
		w.q = max(w.q, m.Heads*lc.HeadDim)
		w.kv = max(w.kv, lc.KVWidth())
		w.ff = max(w.ff, lc.FF)
		w.hd = max(w.hd, lc.HeadDim)
		w.kvHead = max(w.kvHead, lc.KVHeads)
	}
	return w
}
