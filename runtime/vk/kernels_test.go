package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

func stepBuffer(t *testing.T, d *gpu, ntok, pos int, tokens []int32) *vulkan.Buffer {
	t.Helper()
	b, err := d.NewBuffer("step", uint64(16+4*max(len(tokens), 1)+4096), vulkan.MemHost)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Mapped()
	binary.LittleEndian.PutUint32(m, uint32(ntok))
	binary.LittleEndian.PutUint32(m[4:], uint32(pos))
	for i, tk := range tokens {
		binary.LittleEndian.PutUint32(m[16+4*i:], uint32(tk))
	}
	return b
}

// runOnce records, submits and waits for one command buffer; the
// recorder it returns lists what was recorded (Recorded).
func runOnce(t *testing.T, d *gpu, record func(r *vulkan.Recorder) error) *vulkan.Recorder {
	t.Helper()
	r, err := d.NewRecorder(64) // timestamps: Recorded lists the dispatches
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := record(r); err != nil {
		t.Fatal(err)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEmbed checks the embedding gather for every type (and a matrix split
// into parts, there with gemma's scale by √embd) against quant.Dequantize;
// it must match to rounding.
func TestEmbed(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(3))
	for _, typ := range allTypes {
		for _, parts := range []uint64{0, 2000} {
			t.Run(fmt.Sprintf("%s/parts%d", typ, parts), func(t *testing.T) {
				rows, cols := 37, 512
				w := randomWeights(t, typ, rows, cols, rng)
				saved := d.partBytes
				if parts > 0 {
					d.partBytes = parts
				}
				m, err := d.uploadMatrix("embd", typ, rows, cols, w)
				d.partBytes = saved
				if err != nil {
					t.Fatal(err)
				}
				tokens := []int32{36, 0, 5, 5, 17}
				stride := 512 + 64
				x0 := make([]float32, len(tokens)*stride)
				for i := range x0 {
					x0[i] = sentinel
				}
				xb, _ := d.NewBuffer("x", uint64(4*len(x0)), vulkan.MemDevice)
				xb.Write(0, f32bytes(x0))
				step := stepBuffer(t, d, len(tokens)-1, 0, tokens) // the last token is not in the batch
				b := &Backend{d: d, act: activations{x: xb, xStride: stride}, graph: graph{step: step}}
				scale := float32(1)
				if parts > 0 {
					scale = float32(math.Sqrt(float64(cols)))
				}
				runOnce(t, d, func(r *vulkan.Recorder) error { return b.recordEmbed(r, bodyShape{cap: len(tokens)}, m, scale) })
				out := make([]byte, 4*len(x0))
				xb.Read(0, out)
				got := bytesF32(out)
				rb, _ := typ.RowBytes(uint64(cols))
				ref := make([]float32, cols)
				for i, tk := range tokens {
					row := got[i*stride : (i+1)*stride]
					if i == len(tokens)-1 {
						for _, v := range row {
							if !isSentinel(v) {
								t.Fatalf("token %d beyond the batch was written", i)
							}
						}
						continue
					}
					quant.Dequantize(typ, w[uint64(tk)*rb:uint64(tk+1)*rb], ref)
					for i := range ref {
						ref[i] *= scale
					}
					if e := nmse(ref, row[:cols]); e > 1e-7 {
						t.Errorf("token %d (%d): NMSE %.3g", i, tk, e)
					}
					for _, v := range row[cols:] {
						if !isSentinel(v) {
							t.Fatalf("token %d: padding written", i)
						}
					}
				}
			})
		}
	}
}

// refNorm RMS-normalizes x in place with weight w as runtime/cpu does
// ((x·scale)·w, the mean in float64).
func refNorm(x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	for i := range x {
		x[i] = x[i] * scale * w[i]
	}
}

// TestRopeKV checks rotation of queries and keys (normal and NeoX pairing,
// partial rotary dims, none on a NoPE layer), the Q/K norms (per head and
// over the full width) and Q scale, and the cache write (F16 and F32, into
// a ring that wraps) against plain loops, with sentinels around the
// written cache rows; gemma4's V norm (per head, no weight) and its
// KV-shared layers (kvheads 0: Q only, the caches untouched).
func TestRopeKV(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(4))
	for _, c := range []struct {
		neox   bool
		dims   int
		kv     backend.KVType
		qkNorm arch.QKNorm
		noRope bool
		qscale float32
		slots  int // 0: the whole context
		vnorm  bool
		qOnly  bool
		temp   float32 // the attention temperature's β, every 4 positions (mistral3)
	}{
		{false, 64, backend.KVF16, 0, false, 1, 0, false, false, 0}, {true, 64, backend.KVF32, 0, false, 1, 0, false, false, 0}, {true, 32, backend.KVF16, 0, false, 1, 0, false, false, 0}, {false, 48, backend.KVF32, 0, false, 1, 0, false, false, 0},
		{true, 64, backend.KVF16, arch.QKNormHead, false, 1, 0, false, false, 0},
		{true, 64, backend.KVF32, arch.QKNormFull, false, 1, 0, false, false, 0},
		{true, 32, backend.KVF16, arch.QKNormHead, false, 0.125, 0, false, false, 0},
		{false, 64, backend.KVF32, 0, true, 1, 0, false, false, 0},
		{true, 64, backend.KVF16, arch.QKNormHead, true, 0.125, 0, false, false, 0},
		{true, 64, backend.KVF32, 0, false, 1, 7, false, false, 0}, // positions 17..21 wrap around a ring of 7
		{true, 64, backend.KVF16, arch.QKNormHead, false, 1, 0, true, false, 0},
		{true, 64, backend.KVF32, arch.QKNormHead, false, 1, 7, true, false, 0},
		{true, 64, backend.KVF16, arch.QKNormHead, false, 1, 0, true, true, 0},
		{false, 64, backend.KVF16, 0, false, 1, 0, false, false, 0.1}, // positions 17..21 cross a step at 20
	} {
		t.Run(fmt.Sprintf("neox%v/dims%d/%s/qknorm%d/norope%v/qscale%g/slots%d/vnorm%v/qonly%v/temp%g", c.neox, c.dims, c.kv, c.qkNorm, c.noRope, c.qscale, c.slots, c.vnorm, c.qOnly, c.temp), func(t *testing.T) {
			cfg := arch.Config{Embd: 256, Heads: 4, KVHeads: 2, HeadDim: 64, Rope: arch.Rope{Dims: c.dims, Base: 10000, NeoX: c.neox, Scale: 1}}
			ctx, n, pos := 40, 5, 17
			if c.slots > 0 {
				ctx = c.slots
			}
			const eps = 1e-6
			hd, qw, kvw := cfg.HeadDim, cfg.Heads*cfg.HeadDim, cfg.KVHeads*cfg.HeadDim
			qkvStride := qw + 2*kvw
			qkv := randomVec(n*qkvStride, rng)
			b := &Backend{d: d, opts: backend.Options{ContextSize: ctx, KVType: c.kv}, graph: graph{ropeTables: []ropeTable{tableFor(cfg.Rope, ctx)}}}
			b.graph.ropeOff = 256
			nq, nk := 0, 0
			switch c.qkNorm {
			case arch.QKNormHead:
				nq, nk = hd, hd
			case arch.QKNormFull:
				nq, nk = qw, kvw
			}
			qn, kn := make([]float32, max(nq, 1)), make([]float32, max(nk, 1))
			for i := range qn {
				qn[i] = 1 + 0.5*float32(rng.NormFloat64())
			}
			for i := range kn {
				kn[i] = 1 + 0.5*float32(rng.NormFloat64())
			}
			qnb, _ := d.NewBuffer("qn", uint64(4*len(qn)), vulkan.MemDevice)
			knb, _ := d.NewBuffer("kn", uint64(4*len(kn)), vulkan.MemDevice)
			qnb.Write(0, f32bytes(qn))
			knb.Write(0, f32bytes(kn))
			var err error
			b.graph.step, err = d.NewBuffer("step", uint64(b.graph.ropeOff+8*n*c.dims/2+64), vulkan.MemHost)
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint32(b.graph.step.Mapped(), uint32(n))
			binary.LittleEndian.PutUint32(b.graph.step.Mapped()[4:], uint32(pos))
			b.graph.ropeAngles(pos, n)
			qkvb, _ := d.NewBuffer("qkv", uint64(4*len(qkv)), vulkan.MemDevice)
			qkvb.Write(0, f32bytes(qkv))
			qb, _ := d.NewBuffer("q", uint64(4*n*qw), vulkan.MemDevice)
			es := c.kv.Bytes()
			cacheBytes := cfg.KVHeads * ctx * hd * es
			fill := make([]byte, cacheBytes)
			for i := range fill {
				fill[i] = 0xA5
			}
			kc, _ := d.NewBuffer("kc", uint64(cacheBytes), vulkan.MemDevice)
			vc, _ := d.NewBuffer("vc", uint64(cacheBytes), vulkan.MemDevice)
			kc.Write(0, fill)
			vc.Write(0, fill)
			kvf32 := uint32(0)
			if es == 4 {
				kvf32 = 1
			}
			kvh := cfg.KVHeads
			if c.qOnly {
				kvh = 0
			}
			ro := &ropeOp{label: "rope", spec: [7]uint32{uint32(hd), uint32(c.dims), flag(c.neox), kvf32, uint32(c.qkNorm), flag(c.vnorm)},
				table: vulkan.Arg{B: b.graph.step, Off: 256, Size: b.graph.step.Size - 256, Format: fmtU32x2}, q: qb, kc: kc, vc: vc, qn: qnb, kn: knb,
				args: ropeArgs{heads: cfg.Heads, kvHeads: kvh, qkvStride: qkvStride, qStride: qw, slots: ctx, rope: !c.noRope, qScale: c.qscale, eps: eps, temp: plan.Temperature{Beta: c.temp, Length: 4}}}
			runOnce(t, d, func(r *vulkan.Recorder) error { return d.rope(r, ro, qkvb, b.graph.step, n+2) })
			// reference
			cos := make([]float32, c.dims/2)
			sin := make([]float32, c.dims/2)
			qref := make([]float32, n*qw)
			kref := make([][]float32, n)
			m := b.graph.step.Mapped()
			for tk := 0; tk < n; tk++ {
				for i := range cos {
					o := b.graph.ropeOff + 8*(tk*c.dims/2+i)
					cos[i], sin[i] = getF32(m, o), getF32(m, o+4)
				}
				row := append([]float32(nil), qkv[tk*qkvStride:(tk+1)*qkvStride]...)
				switch c.qkNorm {
				case arch.QKNormHead:
					for h := 0; h < cfg.Heads; h++ {
						refNorm(row[h*hd:(h+1)*hd], qn, eps)
					}
					for h := 0; h < cfg.KVHeads; h++ {
						refNorm(row[qw+h*hd:qw+(h+1)*hd], kn, eps)
					}
				case arch.QKNormFull:
					refNorm(row[:qw], qn, eps)
					refNorm(row[qw:qw+kvw], kn, eps)
				}
				for h := 0; h < cfg.Heads+cfg.KVHeads && !c.noRope; h++ {
					ggmlRope(row[h*hd:(h+1)*hd], cos, sin, c.dims, c.neox)
				}
				for i := 0; i < qw; i++ {
					row[i] *= c.qscale
					if c.temp != 0 {
						row[i] *= plan.Temperature{Beta: c.temp, Length: 4}.At(pos + tk)
					}
				}
				if c.vnorm {
					ones := make([]float32, hd)
					for i := range ones {
						ones[i] = 1
					}
					for h := 0; h < cfg.KVHeads; h++ {
						refNorm(row[qw+kvw+h*hd:qw+kvw+(h+1)*hd], ones, eps)
					}
				}
				copy(qref[tk*qw:], row[:qw])
				kref[tk] = row[qw:]
			}
			qout := make([]byte, 4*n*qw)
			qb.Read(0, qout)
			if e := nmse(qref, bytesF32(qout)); e > 1e-7 {
				t.Errorf("q: NMSE %.3g", e)
			}
			kraw, vraw := make([]byte, cacheBytes), make([]byte, cacheBytes)
			kc.Read(0, kraw)
			vc.Read(0, vraw)
			elem := func(raw []byte, i int) (float32, bool) {
				if es == 2 {
					h := binary.LittleEndian.Uint16(raw[2*i:])
					return quant.FP16ToFP32(h), h == 0xA5A5
				}
				u := binary.LittleEndian.Uint32(raw[4*i:])
				return math.Float32frombits(u), u == 0xA5A5A5A5
			}
			var kr, kg, vr, vg []float32
			for h := 0; h < cfg.KVHeads; h++ {
				for p := 0; p < ctx; p++ {
					for dd := 0; dd < hd; dd++ {
						i := (h*ctx+p)*hd + dd
						kv, kun := elem(kraw, i)
						vv, vun := elem(vraw, i)
						// the last of the step's positions that maps to slot p
						tk := -1
						for j := 0; j < n; j++ {
							if (pos+j)%ctx == p {
								tk = j
							}
						}
						if tk < 0 || c.qOnly {
							if !kun || !vun {
								t.Fatalf("cache written at slot %d outside the step", p)
							}
							continue
						}
						kr = append(kr, kref[tk][h*hd+dd])
						kg = append(kg, kv)
						vr = append(vr, kref[tk][kvw+h*hd+dd])
						vg = append(vg, vv)
					}
				}
			}
			bound := 1e-7
			if es == 2 {
				bound = 1e-6 // F16 rounding
			}
			if e := nmse(kr, kg); e > bound {
				t.Errorf("k cache: NMSE %.3g", e)
			}
			if e := nmse(vr, vg); e > bound {
				t.Errorf("v cache: NMSE %.3g", e)
			}
		})
	}
}

// TestAttention checks causal GQA attention over a cache against a plain
// float64 softmax, for F16 and F32 caches, several query tokens and spans
// longer than the lanes.
func TestAttention(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(5))
	cases := []attnCase{
		{64, 4, 2, 3, 20, backend.KVF16, 0, 0, 0, 0, 0, 0}, {64, 4, 4, 1, 0, backend.KVF32, 0, 0, 0, 0, 0, 0}, {32, 8, 2, 5, 37, backend.KVF32, 0, 0, 0, 0, 0, 0}, {8, 8, 4, 2, 5, backend.KVF16, 0, 0, 0, 0, 0, 0},
		{64, 4, 2, 3, 20, backend.KVF16, 1, 0, 0, 0, 0, 0}, {64, 4, 4, 1, 0, backend.KVF32, 1, 0, 0, 0, 0, 0}, {32, 8, 2, 5, 37, backend.KVF32, 1, 0, 0, 0, 0, 0}, {8, 8, 4, 2, 5, backend.KVF16, 1, 0, 0, 0, 0, 0},
		{72, 2, 1, 2, 9, backend.KVF16, 1, 0, 0, 0, 0, 0}, // dimensions not a multiple of the lanes
	}
	// sliding windows (on a full cache and on a ring shorter than the
	// positions, which wraps), soft-caps, and both together, on each form
	for _, ord := range []uint32{0, 1, 2} {
		cases = append(cases,
			attnCase{64, 4, 2, 3, 20, backend.KVF16, ord, 8, 0, 0, 0, 0},
			attnCase{32, 4, 2, 4, 37, backend.KVF32, ord, 5, 8, 0, 0, 0},
			attnCase{64, 4, 2, 3, 20, backend.KVF16, ord, 0, 0, 4, 0, 0},
			attnCase{32, 8, 2, 5, 30, backend.KVF16, ord, 6, 10, 2.5, 0, 0},
			attnCase{16, 2, 1, 2, 1, backend.KVF32, ord, 40, 0, 0, 0, 0}, // window wider than the span
		)
	}
	// split-K (GPU decode): spans over several splits and splits past the
	// span, GQA, head sizes, windows over rings, soft-caps, both caches
	cases = append(cases,
		attnCase{64, 4, 2, 1, 40, backend.KVF16, 0, 0, 0, 0, 8, 0},
		attnCase{64, 4, 4, 1, 0, backend.KVF32, 0, 0, 0, 0, 8, 0},
		attnCase{32, 8, 2, 3, 37, backend.KVF32, 0, 0, 0, 0, 16, 0},
		attnCase{72, 2, 1, 1, 29, backend.KVF16, 0, 0, 0, 0, 8, 0},
		attnCase{32, 4, 2, 2, 37, backend.KVF32, 0, 5, 8, 0, 2, 0},
		attnCase{32, 8, 2, 1, 30, backend.KVF16, 0, 6, 10, 2.5, 4, 0},
		attnCase{64, 4, 2, 1, 50, backend.KVF16, 0, 0, 0, 4, 8, 0},
	)
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) { checkAttention(t, d, c, false, rng) })
	}
}

// TestAttentionSinks checks gpt-oss's attention sinks (a logit per query
// head in the softmax's denominator, with no value) on both forms and on
// split-K, whose merge folds the sink in once per head after
// merging the splits: sinks both above and below the scores' maximum.
func TestAttentionSinks(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(41))
	for _, c := range []attnCase{
		{64, 4, 2, 3, 20, backend.KVF16, 0, 0, 0, 0, 0, 0},
		{32, 8, 2, 5, 37, backend.KVF32, 0, 8, 0, 0, 0, 0},
		{64, 4, 2, 3, 20, backend.KVF16, 1, 0, 0, 0, 0, 0},
		{32, 8, 2, 5, 30, backend.KVF32, 1, 6, 10, 0, 0, 0},
		{64, 4, 2, 1, 40, backend.KVF16, 0, 0, 0, 0, 8, 0},
		{32, 4, 2, 2, 37, backend.KVF32, 0, 5, 8, 0, 2, 0},
		{16, 2, 1, 1, 0, backend.KVF32, 0, 0, 0, 0, 4, 0}, // one position: the sink dominates or not
		{64, 4, 2, 11, 20, backend.KVF16, 2, 0, 0, 0, 0, 0},
		{32, 8, 2, 5, 30, backend.KVF32, 2, 6, 10, 0, 0, 0},
	} {
		t.Run(c.name(), func(t *testing.T) { checkAttention(t, d, c, true, rng) })
	}
}

type attnCase struct {
	hd, heads, kvheads, n, pos int
	kv                         backend.KVType
	ordered                    uint32  // 0: the GPU form, 1: ordered, 2: ordered with token lanes
	window, slots              int     // sliding window (0: none) and ring slots (0: the whole context)
	cap                        float32 // soft-cap (0: none)
	split                      uint32  // split-K granule in positions (0: none), merged by the last split
	qtile                      int     // the GPU form's tokens per workgroup (0: one)
}

func (c attnCase) name() string {
	return fmt.Sprintf("hd%d/h%d/kv%d/n%d/pos%d/%s/ordered%d/w%d/slots%d/cap%g/split%d", c.hd, c.heads, c.kvheads, c.n, c.pos, c.kv, c.ordered, c.window, c.slots, c.cap, c.split)
}

// ctx is the case's cache positions per KV head.
func (c attnCase) ctx() int {
	if c.slots > 0 {
		return c.slots
	}
	return c.pos + c.n + 3
}

// attnInput is one case's query, cache contents (as stored: F16-rounded
// with an F16 cache) and sink logits.
type attnInput struct {
	q, k, v, sinks []float32
}

func newAttnInput(c attnCase, sink bool, rng *rand.Rand) attnInput {
	in := attnInput{
		q: randomVec(c.n*c.heads*c.hd, rng),
		k: randomVec(c.kvheads*c.ctx()*c.hd, rng),
		v: randomVec(c.kvheads*c.ctx()*c.hd, rng),
	}
	if c.kv.Bytes() == 2 {
		for _, v := range [][]float32{in.k, in.v} {
			for i, x := range v {
				v[i] = quant.FP16ToFP32(quant.FP32ToFP16(x)) // the reference sees the stored values
			}
		}
	}
	if sink {
		// sinks on a scale around the scores': some above the max, some below
		in.sinks = make([]float32, c.heads)
		for i := range in.sinks {
			in.sinks[i] = float32(rng.NormFloat64() * 2)
		}
		in.sinks[0] = 8 // above any score: the rescale branch
	}
	return in
}

// runAttention runs case c through recordAttention: the ordered form, or
// the GPU form with lanes lanes and, with c.split, z split-K workgroups
// (0: enough for the whole cache). It returns the n tokens' outputs and
// fails the test if the kernel wrote past them.
func runAttention(t *testing.T, d *gpu, c attnCase, in attnInput, lanes, z int) []float32 {
	t.Helper()
	ctx := c.ctx()
	qw := c.heads * c.hd
	es := c.kv.Bytes()
	enc := func(v []float32) []byte {
		if es == 4 {
			return f32bytes(v)
		}
		return f16bytes(v)
	}
	kc := deviceBytes(t, d, "kc", enc(in.k))
	vc := deviceBytes(t, d, "vc", enc(in.v))
	qb := deviceFloats(t, d, "q", in.q)
	out0 := make([]float32, (c.n+1)*qw)
	for i := range out0 {
		out0[i] = sentinel
	}
	ob := deviceFloats(t, d, "out", out0)
	step := stepBuffer(t, d, c.n, c.pos, nil)
	var sb *vulkan.Buffer
	if in.sinks != nil {
		sb = deviceFloats(t, d, "sinks", in.sinks)
	}
	scale := float32(1 / math.Sqrt(float64(c.hd)))
	if c.cap != 0 {
		scale /= c.cap
	}
	op := attnOp{label: "attn", q: qb, kc: kc, vc: vc, out: ob, step: step, sinks: sb,
		hd: c.hd, heads: c.heads, kvHeads: c.kvheads, slots: ctx, window: c.window, qstride: qw,
		kvf32: es == 4, scale: scale, cap: c.cap, tokens: c.n + 1,
		ordered: c.ordered != 0, tokenLanes: c.ordered == 2, qtile: c.qtile, lanes: lanes, gran: int(c.split), subgroupSure: int(d.Info.SureSubgroup())}
	if c.split != 0 {
		op.splits = z
		if z == 0 {
			op.splits = (ctx + int(c.split) - 1) / int(c.split)
		}
		var err error
		if op.part, err = d.NewBuffer("partials", uint64(4*(c.n+1)*c.heads*op.splits*(c.hd+2)), vulkan.MemDevice); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(op.part.Release)
		op.arrive = zeroBuffer(t, d, "arrivals", 4*(c.n+1)*c.kvheads)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error { return d.recordAttention(r, op) })
	raw := make([]byte, 4*len(out0))
	if err := ob.Read(0, raw); err != nil {
		t.Fatal(err)
	}
	got := bytesF32(raw)
	for i := c.n * qw; i < len(got); i++ {
		if !isSentinel(got[i]) {
			t.Fatalf("output for a token beyond the batch written at %d", i)
		}
	}
	return got[:c.n*qw]
}

// attnReference is case c's attention in float64, the query F16-rounded
// with an F16 cache as the kernels and llama.cpp do.
func attnReference(c attnCase, in attnInput) []float32 {
	ctx, hd, qw := c.ctx(), c.hd, c.heads*c.hd
	scale := 1 / math.Sqrt(float64(hd))
	var ref []float32
	g := c.heads / c.kvheads
	for tk := 0; tk < c.n; tk++ {
		for h := 0; h < c.heads; h++ {
			kvh := h / g
			qh := in.q[tk*qw+h*hd : tk*qw+(h+1)*hd]
			span := c.pos + tk + 1
			first := 0
			if c.window > 0 {
				first = max(0, span-c.window)
			}
			sc := make([]float64, span)
			mx := math.Inf(-1)
			for p := first; p < span; p++ {
				var s float64
				for dd := 0; dd < hd; dd++ {
					qv := qh[dd]
					if c.kv.Bytes() == 2 {
						qv = quant.FP16ToFP32(quant.FP32ToFP16(qv))
					}
					s += float64(qv) * float64(in.k[(kvh*ctx+p%ctx)*hd+dd])
				}
				sc[p] = s * scale
				if c.cap != 0 {
					sc[p] = float64(c.cap) * math.Tanh(sc[p]/float64(c.cap))
				}
				mx = math.Max(mx, sc[p])
			}
			if in.sinks != nil {
				mx = math.Max(mx, float64(in.sinks[h]))
			}
			var sum float64
			if in.sinks != nil {
				sum = math.Exp(float64(in.sinks[h]) - mx)
			}
			for p := first; p < span; p++ {
				sc[p] = math.Exp(sc[p] - mx)
				sum += sc[p]
			}
			for dd := 0; dd < hd; dd++ {
				var o float64
				for p := first; p < span; p++ {
					o += sc[p] * float64(in.v[(kvh*ctx+p%ctx)*hd+dd])
				}
				ref = append(ref, float32(o/sum))
			}
		}
	}
	return ref
}

// checkAttention runs case c against a plain float64 softmax, with a
// random sink logit per query head where sink is set; the GPU form with
// 32 lanes, so spans of a few dozen positions take several tiles.
func checkAttention(t *testing.T, d *gpu, c attnCase, sink bool, rng *rand.Rand) {
	t.Helper()
	in := newAttnInput(c, sink, rng)
	got := runAttention(t, d, c, in, 32, 0)
	// Against float64 the kernel's float32 sums leave ~1e-14; the
	// ordered form with an F16 cache rounds its value sum to F16
	// after every position, as llama.cpp does (measured ≤ 6e-7).
	bound := 1e-10
	if c.ordered != 0 && c.kv == backend.KVF16 {
		bound = 5e-6
	}
	if e := nmse(attnReference(c, in), got); e > bound {
		t.Errorf("NMSE %.3g over %.0e", e, bound)
	} else {
		t.Logf("NMSE %.3g", e)
	}
}

// TestSplitByTexelLimit lowers the device's texel-view limit so a matrix
// must be split by rows into parts each view can span, as a tensor larger
// than maxTexelBufferElements (or maxStorageBufferRange) would be.
func TestSplitByTexelLimit(t *testing.T) {
	d := testDevice(t)
	saved := d.Info.Limits.MaxTexelElements
	d.Info.Limits.MaxTexelElements = 300
	defer func() { d.Info.Limits.MaxTexelElements = saved }()
	rng := rand.New(rand.NewSource(6))
	e, bad := runMatvec(t, d, mvCase{typ: ggml.Q8_0, rows: 61, cols: 256, ntok: 2, epi: epiBias}, rng)
	if e > 5e-4 || bad > 0 {
		t.Errorf("NMSE %.3g, %d sentinels overwritten", e, bad)
	}
	m, err := d.uploadMatrix("w", ggml.Q8_0, 61, 256, randomWeights(t, ggml.Q8_0, 61, 256, rng))
	if err != nil {
		t.Fatal(err)
	}
	// 8 units of 2 texels per row: at most 18 rows under 300 texels
	if len(m.parts) != 4 {
		t.Errorf("%d parts, want 4", len(m.parts))
	}
	for _, p := range m.parts {
		for _, v := range p.views {
			if v.Size/uint64(v.Format.Bytes()) > 300 {
				t.Errorf("view of %d texels over the limit", v.Size/uint64(v.Format.Bytes()))
			}
		}
	}
}

// TestDispatchRejectsLargeRange: a storage-buffer binding over
// maxStorageBufferRange is an error naming the buffer, not a crash.
func TestDispatchRejectsLargeRange(t *testing.T) {
	d := testDevice(t)
	saved := d.Info.Limits.MaxStorageBufferRange
	d.Info.Limits.MaxStorageBufferRange = 1024
	defer func() { d.Info.Limits.MaxStorageBufferRange = saved }()
	big, _ := d.NewBuffer("big output", 4096, vulkan.MemDevice)
	step := stepBuffer(t, d, 1, 0, []int32{0})
	k, err := d.kernel("attention", 5*4, d.Info.SureSubgroup(), 64, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.NewRecorder(0)
	r.Begin()
	err = r.Dispatch("attn", k, []vulkan.Arg{vulkan.R(big), vulkan.R(big), vulkan.R(big), vulkan.W(big), vulkan.R(step), vulkan.R(step), vulkan.W(step), vulkan.W(step)}, []uint32{64, 1, 0, 0, 0}, 1, 1, 1)
	r.End()
	if err == nil || !strings.Contains(err.Error(), "big output") || !strings.Contains(err.Error(), "maxStorageBufferRange") {
		t.Fatalf("got %v", err)
	}
}

// TestRopeYaRN checks the host's YaRN rope tables (gpt-oss: the shared
// file's factor 4 over an original context of 128) against the formula in
// float64: per pair, the interpolated angle θ·scale and the original θ
// blended by the pair's ramp, cos and sin times MScale. The host takes θ by
// repeated float32 multiplication, as ggml does, hence the bound.
func TestRopeYaRN(t *testing.T) {
	m := loadModel(t, testenv.Model(t, "2026/synth-gpt-oss-F32.gguf"))
	r := m.Config.Rope
	y := r.YaRN
	if y == nil {
		t.Fatal("the gpt-oss file has no YaRN")
	}
	if r.Scale >= 1 || y.MScale <= 1 || y.High <= y.Low {
		t.Fatalf("YaRN %+v over scale %g does not blend", *y, r.Scale)
	}
	const n, pos = 4, 300 // past the original context
	pairs := r.Dims / 2
	d := testDevice(t)
	b := &Backend{d: d, opts: backend.Options{ContextSize: 512}, graph: graph{ropeTables: []ropeTable{tableFor(r, 512)}}}
	var err error
	if b.graph.step, err = d.NewBuffer("step", uint64(8*n*pairs), vulkan.MemHost); err != nil {
		t.Fatal(err)
	}
	b.graph.ropeAngles(pos, n)
	got := bytesF32(slices.Clone(b.graph.step.Mapped()[:8*n*pairs]))
	ms := float64(one(r.AttnFactor)) * float64(y.MScale)
	worst := 0.0
	for tk := 0; tk < n; tk++ {
		for i := 0; i < pairs; i++ {
			th := float64(pos+tk) * math.Pow(float64(r.Base), -2*float64(i)/float64(r.Dims))
			ramp := float64(y.Ramp(i))
			th = th*float64(r.Scale)*(1-ramp) + th*ramp
			c, s := got[2*(tk*pairs+i)], got[2*(tk*pairs+i)+1]
			worst = max(worst, math.Abs(float64(c)-ms*math.Cos(th)), math.Abs(float64(s)-ms*math.Sin(th)))
		}
	}
	if worst > 2e-4 {
		t.Errorf("max |Δ| %.3g against float64", worst)
	} else {
		t.Logf("max |Δ| %.3g against float64", worst)
	}
}

// zeroBuffer is a device buffer of n bytes filled with zeros, released at
// the end of the test.
func zeroBuffer(t testing.TB, d *gpu, name string, n int) *vulkan.Buffer {
	t.Helper()
	buf, err := d.NewBuffer(name, uint64(n), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(buf.Release)
	if err := d.Zero(buf); err != nil {
		t.Fatal(err)
	}
	return buf
}
