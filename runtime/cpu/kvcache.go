package cpu

import (
	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// kvCache stores keys and values per layer, position-major:
// [positions x kvHeads*headDim], at each layer's own width. A KV-shared
// layer holds nothing (capacity 0): it reads its source layer's cache
// (LayerConfig.KVLayer). A full-attention layer holds the whole
// context; a sliding-window layer holds only its window, as a ring (position
// p in slot p % capacity). F16 is stored as raw halves so the memory figures
// are the real ones and the rounding is the same as llama.cpp's default
// cache.
type kvCache struct {
	typ      backend.KVType
	widths   []int // per layer: kvHeads * headDim
	capacity []int // positions each layer holds
	windows  []int // per layer: its attention window (0: full)
	k16, v16 [][]uint16
	k32, v32 [][]float32
}

// newKVCache allocates the plan's cache slots, each at the layer that
// writes it; the other layers (recurrent ones keep a state, state.go;
// KV-shared ones read their source's) hold nothing.
func newKVCache(p *plan.Plan, layers int, typ backend.KVType) *kvCache {
	kv := &kvCache{typ: typ, capacity: make([]int, layers), widths: make([]int, layers), windows: make([]int, layers)}
	if typ == backend.KVF16 {
		kv.k16, kv.v16 = make([][]uint16, layers), make([][]uint16, layers)
	} else {
		kv.k32, kv.v32 = make([][]float32, layers), make([][]float32, layers)
	}
	for _, slot := range p.Cache {
		l, n, w := slot.Layer, slot.Positions(p.Context, 0), slot.Width()
		kv.capacity[l], kv.widths[l], kv.windows[l] = n, w, slot.Window
		if typ == backend.KVF16 {
			kv.k16[l], kv.v16[l] = make([]uint16, n*w), make([]uint16, n*w)
		} else {
			kv.k32[l], kv.v32[l] = make([]float32, n*w), make([]float32, n*w)
		}
	}
	return kv
}

func (kv *kvCache) allocated() int64 {
	var n int64
	for l := range kv.k16 {
		n += int64(len(kv.k16[l])+len(kv.v16[l])) * 2
	}
	for l := range kv.k32 {
		n += int64(len(kv.k32[l])+len(kv.v32[l])) * 4
	}
	return n
}

// store writes one position's key and value rows.
func (kv *kvCache) store(layer, pos int, k, v []float32) {
	width := kv.widths[layer]
	o := (pos % kv.capacity[layer]) * width
	if kv.typ == backend.KVF16 {
		kd, vd := kv.k16[layer][o:o+width], kv.v16[layer][o:o+width]
		if simd.F32ToF16(kd, k[:width]) && simd.F32ToF16(vd, v[:width]) {
			return
		}
		for i := range kd {
			kd[i] = quant.FP32ToFP16(k[i])
			vd[i] = quant.FP32ToFP16(v[i])
		}
		return
	}
	copy(kv.k32[layer][o:o+width], k)
	copy(kv.v32[layer][o:o+width], v)
}

// load reads head h's key and value rows for positions [from, to) into
// keys/vals ([to-from x headDim]) as float32.
func (kv *kvCache) load(layer, h, headDim, from, to int, keys, vals []float32) {
	if kv.loadNative(layer, h, headDim, from, to, keys, vals) {
		return
	}
	c, width := kv.capacity[layer], kv.widths[layer]
	for t := from; t < to; t++ {
		o := (t%c)*width + h*headDim
		kd, vd := keys[(t-from)*headDim:(t-from+1)*headDim], vals[(t-from)*headDim:(t-from+1)*headDim]
		if kv.typ == backend.KVF16 {
			ks, vs := kv.k16[layer][o:o+headDim], kv.v16[layer][o:o+headDim]
			for i := range kd {
				kd[i] = quant.FP16ToFP32(ks[i])
				vd[i] = quant.FP16ToFP32(vs[i])
			}
		} else {
			copy(kd, kv.k32[layer][o:o+headDim])
			copy(vd, kv.v32[layer][o:o+headDim])
		}
	}
}

// asStored is x as the cache would return it: rounded through F16 for an
// F16 cache. A batch's own keys are read from the activations, not the
// cache, so that a ring smaller than the batch still serves every query.
func (kv *kvCache) asStored(dst, x []float32) {
	if kv.typ != backend.KVF16 {
		copy(dst, x)
		return
	}
	if simd.RoundF16(dst, x) {
		return
	}
	for i, v := range x {
		dst[i] = quant.FP16ToFP32(quant.FP32ToFP16(v))
	}
}

// keeps reports whether every ring still holds the positions a query at
// pos needs when the cache was last filled up to filled: rewinding past a
// window's worth of positions finds them overwritten.
func (kv *kvCache) keeps(pos, filled int) bool {
	for l, c := range kv.capacity {
		w := kv.windows[l]
		if w == 0 || w > c || c == 0 {
			continue
		}
		need := max(0, pos-w+1)
		if need < filled-c {
			return false
		}
	}
	return true
}
