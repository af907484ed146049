package cpu

import (
	"vkchat/models"
	"vkchat/runtime/backend"
	"vkchat/runtime/quant"
)

// kvCache stores keys and values per layer, position-major:
// [ctx x kvHeads*headDim]. F16 is stored as raw halves so the memory figures
// are the real ones and the rounding is the same as llama.cpp's default cache.
type kvCache struct {
	typ      backend.KVType
	width    int // kvHeads * headDim
	k16, v16 [][]uint16
	k32, v32 [][]float32
}

func newKVCache(c *models.Config, ctx int, typ backend.KVType) *kvCache {
	kv := &kvCache{typ: typ, width: c.KVHeads * c.HeadDim}
	for l := 0; l < c.Layers; l++ {
		if typ == backend.KVF16 {
			kv.k16 = append(kv.k16, make([]uint16, ctx*kv.width))
			kv.v16 = append(kv.v16, make([]uint16, ctx*kv.width))
		} else {
			kv.k32 = append(kv.k32, make([]float32, ctx*kv.width))
			kv.v32 = append(kv.v32, make([]float32, ctx*kv.width))
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
	o := pos * kv.width
	if kv.typ == backend.KVF16 {
		kd, vd := kv.k16[layer][o:o+kv.width], kv.v16[layer][o:o+kv.width]
		for i := range kd {
			kd[i] = quant.FP32ToFP16(k[i])
			vd[i] = quant.FP32ToFP16(v[i])
		}
		return
	}
	copy(kv.k32[layer][o:o+kv.width], k)
	copy(kv.v32[layer][o:o+kv.width], v)
}

// load reads head h's key and value rows for positions [0, n) into
// keys/vals ([n x headDim]) as float32.
func (kv *kvCache) load(layer, h, headDim, n int, keys, vals []float32) {
	for t := 0; t < n; t++ {
		o := t*kv.width + h*headDim
		kd, vd := keys[t*headDim:(t+1)*headDim], vals[t*headDim:(t+1)*headDim]
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
