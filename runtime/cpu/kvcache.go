package cpu

import (
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
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
	typ      backend.KVType // the keys' type
	typV     backend.KVType // the values'
	widths   []int          // per layer: kvHeads * headDim
	capacity []int          // positions each layer holds
	windows  []int          // per layer: its attention window (0: full)
	k16, v16 [][]uint16
	k32, v32 [][]float32
	// kq, vq: a block-quantized half, each row as ggml stores it (blocks
	// of 32 values lie inside a head: head sizes are multiples of 32)
	kq, vq [][]byte
	// keysOnly[l]: layer l's value half is its key half (an MLA slot)
	keysOnly []bool
}

// newKVCache allocates the plan's cache slots, each at the layer that
// writes it; the other layers (recurrent ones keep a state, state.go;
// KV-shared ones read their source's) hold nothing. Keys and values each
// take their own type.
func newKVCache(p *plan.Plan, layers int, typ, typV backend.KVType) *kvCache {
	kv := &kvCache{typ: typ, typV: typV, capacity: make([]int, layers), widths: make([]int, layers), windows: make([]int, layers)}
	kv.k16, kv.v16 = make([][]uint16, layers), make([][]uint16, layers)
	kv.k32, kv.v32 = make([][]float32, layers), make([][]float32, layers)
	kv.kq, kv.vq = make([][]byte, layers), make([][]byte, layers)
	half := func(t backend.KVType, l, n int, f16 [][]uint16, f32 [][]float32, q [][]byte) {
		switch {
		case t == backend.KVF16:
			f16[l] = make([]uint16, n)
		case t.Quantized():
			q[l] = make([]byte, t.RowBytes(n))
		default:
			f32[l] = make([]float32, n)
		}
	}
	kv.keysOnly = make([]bool, layers)
	for _, slot := range p.Cache {
		l, n, w := slot.Layer, slot.Positions(p.Context, 0), slot.Width()
		kv.capacity[l], kv.widths[l], kv.windows[l] = n, w, slot.Window
		half(typ, l, n*w, kv.k16, kv.k32, kv.kq)
		if slot.Latent > 0 {
			// an MLA row is its own value (the plan's check keeps one
			// unquantized type for both): the value half is the key half,
			// and storing a value rewrites the same row
			kv.keysOnly[l], kv.v16[l], kv.v32[l] = true, kv.k16[l], kv.k32[l]
			continue
		}
		half(typV, l, n*w, kv.v16, kv.v32, kv.vq)
	}
	return kv
}

func (kv *kvCache) allocated() int64 {
	var n int64
	for l := range kv.k16 {
		if kv.keysOnly[l] {
			n += int64(len(kv.k16[l]))*2 + int64(len(kv.k32[l]))*4
			continue
		}
		n += int64(len(kv.k16[l])+len(kv.v16[l]))*2 + int64(len(kv.k32[l])+len(kv.v32[l]))*4 + int64(len(kv.kq[l])+len(kv.vq[l]))
	}
	return n
}

// quantized reports whether either half is block-quantized.
func (kv *kvCache) quantized() bool { return kv.typ.Quantized() || kv.typV.Quantized() }

// ggmlType is a quantized cache type's block format.
func ggmlType(t backend.KVType) ggml.Type {
	switch t {
	case backend.KVQ8_0:
		return ggml.Q8_0
	case backend.KVQ4_0:
		return ggml.Q4_0
	case backend.KVQ5_0:
		return ggml.Q5_0
	case backend.KVQ4_1:
		return ggml.Q4_1
	case backend.KVQ5_1:
		return ggml.Q5_1
	case backend.KVIQ4_NL:
		return ggml.IQ4_NL
	}
	panic("cpu backend: no block format for KV type " + string(t))
}

// store writes one position's key and value rows.
func (kv *kvCache) store(layer, pos int, k, v []float32) {
	width := kv.widths[layer]
	slot := pos % kv.capacity[layer]
	o := slot * width
	if kv.typ == backend.KVF16 && kv.typV == backend.KVF16 {
		kd, vd := kv.k16[layer][o:o+width], kv.v16[layer][o:o+width]
		if simd.F32ToF16(kd, k[:width]) && simd.F32ToF16(vd, v[:width]) {
			return
		}
	}
	storeHalf(kv.typ, k[:width], layer, slot, width, kv.k16, kv.k32, kv.kq)
	storeHalf(kv.typV, v[:width], layer, slot, width, kv.v16, kv.v32, kv.vq)
}

// storeHalf writes one row of a half in its type, a quantized row once, at
// write time, as llama.cpp's set_rows does.
func storeHalf(t backend.KVType, x []float32, layer, slot, width int, f16 [][]uint16, f32 [][]float32, q [][]byte) {
	switch {
	case t == backend.KVF16:
		d := f16[layer][slot*width : (slot+1)*width]
		for i := range d {
			d[i] = quant.FP32ToFP16(x[i])
		}
	case t.Quantized():
		rb := int(t.RowBytes(width))
		if err := quant.QuantizeRow(ggmlType(t), x, q[layer][slot*rb:(slot+1)*rb]); err != nil {
			panic("cpu backend: " + err.Error()) // widths are multiples of 32 (New checks)
		}
	default:
		copy(f32[layer][slot*width:(slot+1)*width], x)
	}
}

// load reads head h's key and value rows for positions [from, to) into
// keys/vals ([to-from x headDim]) as float32; a quantized V is dequantized,
// and a quantized K is not read (loadKeyBlocks).
func (kv *kvCache) load(layer, h, headDim, from, to int, keys, vals []float32) {
	if kv.loadNative(layer, h, headDim, from, to, keys, vals) {
		return
	}
	c, width := kv.capacity[layer], kv.widths[layer]
	for t := from; t < to; t++ {
		slot := t % c
		o := slot*width + h*headDim
		kd, vd := keys[(t-from)*headDim:(t-from+1)*headDim], vals[(t-from)*headDim:(t-from+1)*headDim]
		if !kv.typ.Quantized() {
			loadHalf(kv.typ, kd, layer, o, kv.k16, kv.k32, nil)
		}
		loadHalf(kv.typV, vd, layer, o, kv.v16, kv.v32, kv.vq)
	}
}

// loadHalf reads len(dst) values of a half of type t at value offset o of
// layer's row store.
func loadHalf(t backend.KVType, dst []float32, layer, o int, f16 [][]uint16, f32 [][]float32, q [][]byte) {
	switch {
	case t == backend.KVF16:
		s := f16[layer][o : o+len(dst)]
		for i := range dst {
			dst[i] = quant.FP16ToFP32(s[i])
		}
	case t.Quantized():
		bo := int(t.RowBytes(o)) // o is a whole number of blocks: heads are
		_ = quant.Dequantize(ggmlType(t), q[layer][bo:], dst)
	default:
		copy(dst, f32[layer][o:o+len(dst)])
	}
}

// loadKeyBlocks copies head h's quantized key blocks for positions
// [from, to) into dst, one head row after another.
func (kv *kvCache) loadKeyBlocks(layer, h, headDim, from, to int, dst []byte) {
	c, width := kv.capacity[layer], kv.widths[layer]
	hb, rb := int(kv.typ.RowBytes(headDim)), int(kv.typ.RowBytes(width))
	for t := from; t < to; t++ {
		o := (t%c)*rb + h*hb
		copy(dst[(t-from)*hb:(t-from+1)*hb], kv.kq[layer][o:o+hb])
	}
}

// asStored is x as a half of type t would return it: rounded through F16
// for an F16 cache, through its blocks for a quantized one. A batch's own
// keys and values are read from the activations, not the cache, so that a
// ring smaller than the batch still serves every query.
func asStored(t backend.KVType, dst, x []float32, q []byte) {
	if t.Quantized() {
		_ = quant.QuantizeRow(ggmlType(t), x, q)
		_ = quant.Dequantize(ggmlType(t), q, dst)
		return
	}
	if t != backend.KVF16 {
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
