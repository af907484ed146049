package cpu

import "vkchat/runtime/backend"

// A block-quantized KV cache is read as llama.cpp's CPU flash attention
// reads it (ggml-cpu ops.cpp flash_attn_ext, one query row at a time): the
// score never dequantizes K — the query is converted to K's vec_dot type
// (Q8_0) and the blocks' integer dot products are summed (quant's
// RowDotter); a quantized V is dequantized and accumulated in f32 with the
// online softmax. With an F16 or F32 half beside a quantized one, that half
// is read as the plain cache reads it.

// attendQuantized is attendHead's rest for a cache with a quantized half:
// keys and vals hold the cached positions [lo, pos) as load left them (a
// quantized K not at all), the batch's own are taken from the activations
// as the cache would store them.
func (b *Backend) attendQuantized(layer, kvh, n, pos, lo, window int, scale float32, keys, vals []float32) {
	s, a := &b.s, &b.layers[layer].att
	hd, group := a.HeadDim, a.Heads/a.KVHeads
	qw, kvw := a.Heads*hd, a.KVHeads*hd
	cl := b.layers[layer].kvLayer
	ws := &b.attnWork[kvh]
	qk := b.kv.typ.Quantized()
	hb := int(b.kv.typ.RowBytes(hd))
	total := pos + n
	var kb []byte
	if qk {
		kb = ws.kq[:(total-lo)*hb]
		b.kv.loadKeyBlocks(cl, kvh, hd, lo, pos, kb)
	}
	for i := 0; i < n; i++ {
		o := (pos - lo + i) * hd
		k := s.k[i*kvw+kvh*hd : i*kvw+(kvh+1)*hd]
		if qk {
			ko := (pos - lo + i) * hb
			asStored(b.kv.typ, keys[o:o+hd], k, kb[ko:ko+hb])
		} else {
			asStored(b.kv.typ, keys[o:o+hd], k, nil)
		}
		asStored(b.kv.typV, vals[o:o+hd], s.v[i*kvw+kvh*hd:i*kvw+(kvh+1)*hd], ws.vq)
	}
	f16K, f16V := b.kv.typ == backend.KVF16, b.kv.typV == backend.KVF16
	var sink float32 = noSink
	for g := 0; g < group; g++ {
		h := kvh*group + g
		if sinks := b.layers[layer].sinks; sinks != nil {
			sink = sinks[h]
		}
		for i := 0; i < n; i++ {
			q := s.q[i*qw+h*hd : i*qw+(h+1)*hd]
			out := s.att[i*qw+h*hd : i*qw+(h+1)*hd]
			from := lo
			if window > 0 {
				from = max(lo, pos+i-window+1)
			}
			span := pos + i + 1 - from
			sc := ws.scores[:span]
			switch {
			case qk:
				ws.rd.Dots(ggmlType(b.kv.typ), kb[(from-lo)*hb:], q, sc)
			default:
				qq := q
				if f16K {
					for d := range q {
						ws.qh[d] = round16(q[d])
					}
					qq = ws.qh[:hd]
				}
				for t := range sc {
					sc[t] = vecDot(qq, keys[(from-lo+t)*hd:(from-lo+t+1)*hd])
				}
			}
			attendScores(sc, vals[(from-lo)*hd:], out, scale, a.Softcap, sink, f16V)
		}
	}
}

// attendScores is attendPortable's online softmax on scores already
// computed (before the scale, which a soft-cap divides as there): the
// values accumulated in F16 (f16) or F32.
func attendScores(scores, vals, out []float32, scale, softcap, sink float32, f16 bool) {
	hd := len(out)
	if softcap != 0 {
		scale /= softcap
	}
	acc := online{out: out, f16: f16}
	acc.start()
	for t, raw := range scores {
		acc.add(raw*scale, softcap, vals[t*hd:(t+1)*hd])
	}
	acc.finish(sink)
}
