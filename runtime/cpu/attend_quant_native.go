package cpu

import (
	"math"
	"unsafe"

	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// attendQuantNative is attendQuantized with native kernels reading the
// cache where it lies: the query converted to K's vec_dot type once, the
// scores as the weight products' block integer dot (simd.AttnKeyScores: simd.MatMul's kernels, prefetching) over the
// key rows in the cache, the values decoded in registers as they are
// summed (simd.AttnValues). Nothing is widened or copied per step, so a
// step reads the quantized cache's bytes and no more; a widened copy per
// step (attendQuantized) reads the cache and writes and reads the copy at
// four bytes a value. The batch's own rows, which the cache does not hold
// yet, are encoded into scratch once per head and read from there. Every
// float operation is attendQuantized's, in its order, so the two agree
// bit for bit (TestAttendQuantNativeMatchesPortable). It reports false,
// having done nothing, for a float K or where a kernel is missing.
func (b *Backend) attendQuantNative(layer, kvh, n, pos, lo, window int, scale float32) bool {
	if !b.quantNative {
		return false
	}
	s, a := &b.s, &b.layers[layer].att
	hd, group := a.HeadDim, a.Heads/a.KVHeads
	kt, vt := ggmlType(b.kv.typ), valueType(b.kv.typV)
	qw, kvw := a.Heads*hd, a.KVHeads*hd
	cl := b.layers[layer].kvLayer
	ws := &b.attnWork[kvh]
	c := b.kv.capacity[cl]

	// the cache's rows for this head: key blocks and values, rb/vb bytes
	// from one position's row to the next
	hb, rb := int(b.kv.typ.RowBytes(hd)), int(b.kv.typ.RowBytes(kvw))
	kc := b.kv.kq[cl][kvh*hb:]
	vc, vb, vhb := b.kv.valueRows(cl, kvh, hd)

	// the batch's rows, encoded as the cache will store them
	kbat := ws.kq[:n*hb]
	vbat, vbStride, vbt := ws.vbat, vhb, vt
	for i := 0; i < n; i++ {
		k := s.k[i*kvw+kvh*hd : i*kvw+(kvh+1)*hd]
		_ = quant.QuantizeRow(kt, k, kbat[i*hb:(i+1)*hb]) // hd is whole blocks (New checks)
		v := s.v[i*kvw+kvh*hd : i*kvw+(kvh+1)*hd]
		if b.kv.typV.Quantized() {
			_ = quant.QuantizeRow(vt, v, vbat[i*vhb:(i+1)*vhb])
			continue
		}
		// an F16 value is read back widened, as an F32 one
		asStored(b.kv.typV, ws.vals[i*hd:(i+1)*hd], v, nil)
	}
	if !b.kv.typV.Quantized() {
		vbat, vbStride, vbt = f32Bytes(ws.vals[:n*hd]), 4*hd, ggml.F32
	}

	acts := &ws.qa
	vecType := ggml.Q8_0
	if kt == ggml.Q4_1 || kt == ggml.Q5_1 {
		vecType = ggml.Q8_1
	}
	f16V := b.kv.typV == backend.KVF16
	for g := 0; g < group; g++ {
		h := kvh*group + g
		var sink float32 = noSink
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
			acts.quantize(q, vecType == ggml.Q8_1)

			// the segments: cached positions [from, pos) in runs that do
			// not wrap the ring, then the batch's rows up to this one
			var segs [3]qseg
			ns := 0
			for t := from; t < pos; {
				slot := t % c
				m := min(pos-t, c-slot)
				segs[ns] = qseg{t - from, m, kc[slot*rb:], rb, vc[slot*vb:], vb, vt}
				ns++
				t += m
			}
			if b0 := max(from, pos) - pos; b0 <= i {
				segs[ns] = qseg{max(from, pos) - from, i + 1 - b0, kbat[b0*hb:], hb, vbat[b0*vbStride:], vbStride, vbt}
				ns++
			}
			for _, sg := range segs[:ns] {
				simd.AttnKeyScores(int(kt), sg.k, sg.kStride, hb, &acts.a, sc[sg.at:sg.at+sg.n])
			}
			sl := scale
			if sc0 := a.Softcap; sc0 != 0 {
				// the soft-cap in Go (tanh), as attendScores applies it;
				// the kernel then scales by 1, which changes nothing
				sl /= sc0
				for t, raw := range sc {
					sc[t] = sc0 * tanhf(raw*sl)
				}
				sl = 1
			}
			clear(out)
			state := [2]float32{float32(math.Inf(-1)), 0}
			buf := getAttendBuf(span)
			for _, sg := range segs[:ns] {
				simd.AttnValues(sc[sg.at:sg.at+sg.n], sl, sg.v, int(sg.vt), sg.vStride, out, f16V, &state, buf.work, buf.rescale)
			}
			attendBufs.Put(buf)
			acc := online{out: out, m: state[0], sum: state[1]}
			acc.finish(sink)
		}
	}
	return true
}

// qseg is a run of positions attendQuantNative reads from one place: n
// positions whose scores start at sc[at], key rows kStride bytes apart in
// k, values of type vt vStride bytes apart in v.
type qseg struct {
	at, n   int
	k       []byte
	kStride int
	v       []byte
	vStride int
	vt      ggml.Type
}

// qacts is one query converted to Q8_0 or Q8_1 for simd.MatMul, reused.
type qacts struct {
	qs   []int8
	d, s []float32
	sums []int32
	a    simd.Acts
}

// quantize converts q as quant's activations are converted for the native
// kernels (bit-identical to the portable quantizer).
func (x *qacts) quantize(q []float32, q81 bool) {
	nb := len(q) / 32
	if len(x.qs) < len(q) {
		x.qs, x.d, x.s, x.sums = make([]int8, len(q)), make([]float32, nb), make([]float32, nb), make([]int32, nb)
	}
	var s []float32
	if q81 {
		s = x.s[:nb]
	}
	simd.QuantizeQ8(q, x.qs[:len(q)], x.d[:nb], x.sums[:nb], s)
	x.a = simd.Acts{Qs: x.qs[:len(q)], D: x.d[:nb], S: s, Sums: x.sums[:nb], N: len(q)}
}

// valueType is the ggml type a half of type t is kept in.
func valueType(t backend.KVType) ggml.Type {
	switch t {
	case backend.KVF16:
		return ggml.F16
	case backend.KVF32:
		return ggml.F32
	}
	return ggmlType(t)
}

// valueRows returns layer's value store from head h's first value on as
// bytes, the bytes from one position's row to the next, and the bytes of
// one head's values.
func (kv *kvCache) valueRows(layer, h, headDim int) (rows []byte, stride, head int) {
	width := kv.widths[layer]
	switch {
	case kv.typV == backend.KVF16:
		return u16Bytes(kv.v16[layer])[2*h*headDim:], 2 * width, 2 * headDim
	case kv.typV.Quantized():
		hb := int(kv.typV.RowBytes(headDim))
		return kv.vq[layer][h*hb:], int(kv.typV.RowBytes(width)), hb
	}
	return f32Bytes(kv.v32[layer])[4*h*headDim:], 4 * width, 4 * headDim
}

func f32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
}

func u16Bytes(x []uint16) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 2*len(x))
}
