package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/vk/vulkan"
)

func deviceBytes(t *testing.T, d *gpu, name string, b []byte) *vulkan.Buffer {
	t.Helper()
	buf, err := d.NewBuffer(name, uint64(len(b)+64), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(buf.Release)
	if err := buf.Write(0, b); err != nil {
		t.Fatal(err)
	}
	return buf
}

// TestAttnSplits checks the split rule (tuning.attnSplits for the recorded
// workgroups, attnChunk for a step's cut of the live span): every live
// position in exactly one split, no split empty, splits no more than
// recorded, chunks whole granules, and the recorded count from the
// device's compute units.
func TestAttnSplits(t *testing.T) {
	tu := gpuTuning
	for _, c := range []struct {
		kvHeads, slots, units, want int
	}{
		{8, 131072, 128, 32}, // 8B on a 4090: 2 workgroups per SM
		{8, 131072, 132, 33}, // on an H200
		{4, 2048, 128, 64},   // 1B shape: 2048/32 = 64 granules, 64 wanted
		{4, 1024, 128, 32},   // capped by the cache: 1024/32 granules
		{32, 4096, 32, 2},    // many KV heads fill the default's units alone
		{64, 4096, 32, 0},    // one split: no split-K
		{8, 40, 128, 2},      // a small cache: 2 granules
		{8, 32, 128, 0},      // one granule: no split-K
		{1, 100000, 1, 2},    // one unit still takes its waves
	} {
		if got := tu.attnSplits(c.kvHeads, c.slots, c.units); got != c.want {
			t.Errorf("attnSplits(kv %d, slots %d, units %d) = %d, want %d", c.kvHeads, c.slots, c.units, got, c.want)
		}
	}
	if cpuTuning.attnSplits(8, 131072, 128) != 0 {
		t.Error("the ordered form (CPU devices) must not split")
	}
	for _, gran := range []int{1, 8, 32} {
		for _, z := range []int{1, 2, 7, 32, 33} {
			for live := 1; live <= 3000; live += 1 + live/50 {
				chunk, n := attnChunk(live, z, gran)
				if chunk%gran != 0 || chunk < gran {
					t.Fatalf("live %d z %d gran %d: chunk %d not whole granules", live, z, gran, chunk)
				}
				if n < 1 || n > z {
					t.Fatalf("live %d z %d gran %d: %d splits, 1..%d allowed", live, z, gran, n, z)
				}
				// splits 0..n-1 cover [0, live) and the last one is non-empty
				if (n-1)*chunk >= live || n*chunk < live {
					t.Fatalf("live %d z %d gran %d: chunk %d × %d splits does not cover the span exactly", live, z, gran, chunk, n)
				}
				// as few as cover: a granule less per split would need more than z
				if chunk > gran && (live+chunk-gran-1)/(chunk-gran) <= z {
					t.Fatalf("live %d z %d gran %d: chunk %d larger than needed", live, z, gran, chunk)
				}
			}
		}
	}
}

// attnSpanCase is one row of TestAttentionSpans: a decode step (one token)
// at span positions, hd and group g, over two KV heads.
type attnSpanCase struct {
	hd, g, span   int
	kv            backend.KVType
	window, slots int
	cap           float32
	z             int // split-K workgroups (0: no split, the prefill form)
}

// TestAttentionSpans holds the GPU form against the ordered form, the CPU
// backend's attention and a float64 softmax over head sizes, GQA groups,
// spans (one position, split and tile boundaries, past 4,096), sliding
// windows over rings and soft-caps, with the GPU layout's lanes and
// granule.
func TestAttentionSpans(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(23))
	lanes, gran := gpuTuning.attnLanes, gpuTuning.attnGran
	var cases []attnSpanCase
	spans := []int{1, 31, 32, 33, 127, 128, 129, 257, 1000, 4096, 5000}
	i := 0
	for _, hd := range []int{64, 80, 128, 256} {
		for _, g := range []int{1, 4, 8} {
			// each (head size, group) on a short and a long span, split
			// and not, F16 and F32 caches in turn
			kv := []backend.KVType{backend.KVF16, backend.KVF32}[i%2]
			short, long := spans[i%7], spans[7+i%4]
			cases = append(cases,
				attnSpanCase{hd, g, short, kv, 0, 0, 0, 8},
				attnSpanCase{hd, g, long, kv, 0, 0, 0, 16},
				attnSpanCase{hd, g, long, backend.KVF16, 0, 0, 0, 0},
			)
			i++
		}
	}
	cases = append(cases,
		// split boundaries: z = 4 splits of 32-granules change chunk at 128
		attnSpanCase{64, 4, 128, backend.KVF16, 0, 0, 0, 4},
		attnSpanCase{64, 4, 129, backend.KVF16, 0, 0, 0, 4},
		attnSpanCase{64, 4, 4 * gran * 3, backend.KVF16, 0, 0, 0, 4},
		attnSpanCase{64, 4, 4*gran*3 + 1, backend.KVF16, 0, 0, 0, 4},
		// more splits recorded than the span fills
		attnSpanCase{128, 8, 40, backend.KVF16, 0, 0, 0, 32},
		// sliding windows, on a ring shorter than the positions
		attnSpanCase{128, 4, 3000, backend.KVF16, 512, 640, 0, 16},
		attnSpanCase{64, 8, 700, backend.KVF32, 100, 128, 0, 8},
		attnSpanCase{256, 2, 5000, backend.KVF16, 1024, 1024, 0, 0},
		// soft-caps (gemma2), with a window and split
		attnSpanCase{256, 2, 2000, backend.KVF16, 0, 0, 50, 16},
		attnSpanCase{128, 2, 900, backend.KVF16, 256, 300, 30, 8},
	)
	for _, c := range cases {
		name := fmt.Sprintf("hd%d/g%d/span%d/%s/w%d/slots%d/cap%g/z%d", c.hd, c.g, c.span, c.kv, c.window, c.slots, c.cap, c.z)
		t.Run(name, func(t *testing.T) {
			ac := attnCase{hd: c.hd, heads: 2 * c.g, kvheads: 2, n: 1, pos: c.span - 1, kv: c.kv, window: c.window, slots: c.slots, cap: c.cap}
			if c.z > 0 {
				ac.split = uint32(gran)
			}
			in := newAttnInput(ac, false, rng)
			gpuForm := runAttention(t, d, ac, in, lanes, c.z)
			ordAC := ac
			ordAC.ordered, ordAC.split = 1, 0
			ordered := runAttention(t, d, ordAC, in, 0, 0)
			ref := attnReference(ac, in)
			cpuOut := attnCPU(ac, in)
			// The GPU form sums in float32 (F16 cache values are exact
			// in it): against float64 only summation order, measured
			// ≤ 3e-12. The ordered form and the CPU backend round the
			// value sum to F16 at every position with an F16 cache, an
			// error that grows with the live span: measured 5.3e-6 at
			// 257 positions, 2.0e-5 at 1,000, 1.2e-4 at 4,096, so the
			// bound is 5e-6 per 64 live positions. The two agree with
			// each other to their exp's last bits, a rare F16 rounding
			// apart: measured ≤ 1.4e-8.
			live := c.span
			if c.window > 0 {
				live = min(live, c.window)
			}
			f16 := c.kv == backend.KVF16
			bound := func(tight float64) float64 {
				if f16 {
					return 5e-6 * math.Max(1, float64(live)/64)
				}
				return tight
			}
			cpuBound := 1e-12
			if f16 {
				cpuBound = 1e-7
			}
			for _, cmp := range []struct {
				what  string
				a, b  []float32
				bound float64
			}{
				{"GPU form vs float64", ref, gpuForm, 1e-10},
				{"ordered form vs float64", ref, ordered, bound(1e-10)},
				{"GPU form vs ordered form", ordered, gpuForm, bound(1e-10)},
				{"ordered form vs CPU backend", cpuOut, ordered, cpuBound},
			} {
				if e := nmse(cmp.a, cmp.b); e > cmp.bound || math.IsNaN(e) {
					t.Errorf("%s: NMSE %.3g over %.0e", cmp.what, e, cmp.bound)
				} else {
					t.Logf("%s: NMSE %.3g", cmp.what, e)
				}
			}
		})
	}
}

// attnCPU is case c through the CPU backend's attention, head by head.
func attnCPU(c attnCase, in attnInput) []float32 {
	ctx, hd, qw := c.ctx(), c.hd, c.heads*c.hd
	g := c.heads / c.kvheads
	out := make([]float32, c.n*qw)
	scale := float32(1 / math.Sqrt(float64(hd)))
	for tk := 0; tk < c.n; tk++ {
		span := c.pos + tk + 1
		first := 0
		if c.window > 0 {
			first = max(0, span-c.window)
		}
		for h := 0; h < c.heads; h++ {
			kvh := h / g
			keys := make([]float32, 0, (span-first)*hd)
			vals := make([]float32, 0, (span-first)*hd)
			for p := first; p < span; p++ {
				row := (kvh*ctx + p%ctx) * hd
				keys = append(keys, in.k[row:row+hd]...)
				vals = append(vals, in.v[row:row+hd]...)
			}
			cpu.AttendHead(in.q[tk*qw+h*hd:tk*qw+(h+1)*hd], keys, vals, out[tk*qw+h*hd:tk*qw+(h+1)*hd], span-first, scale, c.cap, c.kv.Bytes() == 2)
		}
	}
	return out
}

// BenchmarkAttentionDecode times one decode step's attention for one layer
// of the 1B shape (hd 64, 32 query heads over 4 KV heads, F16 cache) at a
// depth of 4,096 positions, the ordered form against the GPU form (split
// over the device's compute units as the GPU layout records it, and
// unsplit); SetBytes is the K and V read. go test -run X -bench
// AttentionDecode ./runtime/vk
func BenchmarkAttentionDecode(b *testing.B) {
	benchAttention(b, 1, 4096, []string{"ordered", "gpu", "gpu-unsplit"})
}

// BenchmarkAttentionPrefill times a prefill chunk's attention for one
// layer of the 1B shape: 64 tokens at positions 448-511 (the last chunk of
// a pp512), the ordered form with token lanes (a CPU device's), over a
// head's dimensions, and the GPU form; SetBytes is the K and V read once.
// go test -run X -bench AttentionPrefill ./runtime/vk
func BenchmarkAttentionPrefill(b *testing.B) {
	benchAttention(b, 64, 448, []string{"ordered", "ordered-dims", "gpu-unsplit"})
}

// benchAttention times tokens queries at positions depth.. of the 1B
// shape's layer through each attention form; it reports the scores' and
// value sums' GFLOP/s.
func benchAttention(b *testing.B, tokens, depth int, forms []string) {
	d := testDevice(b)
	const hd, heads, kvHeads = 64, 32, 4
	slots := depth + tokens
	rng := rand.New(rand.NewSource(1))
	kvBytes := kvHeads * slots * hd * 2
	mk := func(name string, n int) *vulkan.Buffer {
		buf, err := d.NewBuffer(name, uint64(n), vulkan.MemDevice)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(buf.Release)
		raw := make([]byte, n)
		for i := 0; i+2 <= n; i += 2 {
			binary.LittleEndian.PutUint16(raw[i:], uint16(0x3000+rng.Intn(0x800))) // F16 in [0.125, 0.25)
		}
		if err := buf.Write(0, raw); err != nil {
			b.Fatal(err)
		}
		return buf
	}
	kc, vc := mk("kc", kvBytes), mk("vc", kvBytes)
	q := mk("q", 4*tokens*heads*hd) // reads as small floats
	out := mk("out", 4*tokens*heads*hd)
	step, err := d.NewBuffer("step", 64, vulkan.MemHost)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(step.Release)
	pos := depth
	if tokens == 1 {
		pos = depth - 1 // a decode step at depth sees depth positions
	}
	binary.LittleEndian.PutUint32(step.Mapped(), uint32(tokens))
	binary.LittleEndian.PutUint32(step.Mapped()[4:], uint32(pos))
	// 2 multiply-adds per dimension, head and position a token sees
	flops := 0
	for t := 0; t < tokens; t++ {
		flops += 4 * hd * heads * (pos + t + 1)
	}
	for _, form := range forms {
		b.Run(form, func(b *testing.B) {
			tu := gpuTuning
			if strings.HasPrefix(form, "ordered") {
				tu = cpuTuning
				tu.attnTokenLanes = form == "ordered"
			}
			old := d.tune
			d.tune = tu
			defer func() { d.tune = old }()
			op := attnOp{label: "attn", q: q, kc: kc, vc: vc, out: out, step: step, hd: hd, heads: heads, kvHeads: kvHeads,
				slots: slots, qstride: heads * hd, scale: 0.125, tokens: tokens}
			d.attnFor(&op, tokens == 1 && form != "gpu-unsplit")
			if op.splits > 0 {
				op.part = mk("partials", 4*heads*op.splits*(hd+2))
				op.arrive = zeroBuffer(b, d, "arrivals", 4*kvHeads)
			}
			r, err := d.NewRecorder(0)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Begin(); err != nil {
				b.Fatal(err)
			}
			if err := d.recordAttention(r, op); err != nil {
				b.Fatal(err)
			}
			if err := r.End(); err != nil {
				b.Fatal(err)
			}
			if err := r.Run(); err != nil { // compiles on llvmpipe
				b.Fatal(err)
			}
			b.SetBytes(int64(2 * kvBytes))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := r.Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64(op.splits), "splits")
		})
	}
}

// TestAttentionTokenLanes checks the ordered form with a token on each
// lane (a prefill's on CPU devices) against the ordered form over a head's
// dimensions and the CPU backend, which round the value sums the same way:
// token counts within one tile, exactly a tile and over several (the last
// one partial), GQA groups, head sizes with and without a tail past whole
// blocks of 32, windows over rings, soft-caps and sinks.
func TestAttentionTokenLanes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(61))
	sg := int(d.Info.SureSubgroup())
	type tlCase struct {
		hd, g, n, pos int
		kv            backend.KVType
		window, slots int
		cap           float32
		sink          bool
	}
	cases := []tlCase{
		{64, 1, 1, 0, backend.KVF16, 0, 0, 0, false},
		{64, 4, 3, 20, backend.KVF16, 0, 0, 0, false},
		{64, 4, sg, 100, backend.KVF16, 0, 0, 0, false},
		{128, 4, 2*sg + 3, 300, backend.KVF16, 0, 0, 0, false},
		{80, 2, sg + 1, 40, backend.KVF16, 0, 0, 0, false}, // a tail of 16 past the blocks of 32
		{32, 8, 20, 37, backend.KVF32, 0, 0, 0, false},
		{8, 2, 5, 9, backend.KVF32, 0, 0, 0, false}, // all tail
		{64, 4, 3*sg - 1, 200, backend.KVF16, 64, 96, 0, false},
		{128, 2, 2 * sg, 150, backend.KVF16, 0, 0, 30, false},
		{64, 4, sg + 5, 60, backend.KVF16, 0, 0, 0, true},
		{32, 2, 9, 3, backend.KVF32, 6, 10, 0, true},
	}
	for _, c := range cases {
		name := fmt.Sprintf("hd%d/g%d/n%d/pos%d/%s/w%d/slots%d/cap%g/sink%v", c.hd, c.g, c.n, c.pos, c.kv, c.window, c.slots, c.cap, c.sink)
		t.Run(name, func(t *testing.T) {
			ac := attnCase{hd: c.hd, heads: 2 * c.g, kvheads: 2, n: c.n, pos: c.pos, kv: c.kv, ordered: 2, window: c.window, slots: c.slots, cap: c.cap}
			in := newAttnInput(ac, c.sink, rng)
			lanesForm := runAttention(t, d, ac, in, 0, 0)
			dims := ac
			dims.ordered = 1
			dimsForm := runAttention(t, d, dims, in, 0, 0)
			// The two ordered forms must agree to the last bit: a
			// token prefilled (token lanes) and the same token decoded
			// (dimensions) give a forked reply the logits of a fresh
			// one (engine's TestHybridForkMatchesFresh).
			for i := range dimsForm {
				if dimsForm[i] != lanesForm[i] {
					t.Fatalf("token lanes vs ordered form: output %d is %g, the dimensions form's %g (first of the differences)", i, lanesForm[i], dimsForm[i])
				}
			}
			// The CPU backend sums a score in another order, which may
			// move a value sum's F16 rounding (TestAttentionSpans's bound).
			bound := 1e-12
			if c.kv == backend.KVF16 {
				bound = 1e-7
			}
			var cmps []struct {
				what string
				a, b []float32
			}
			for _, cmp := range cmps {
				same := 0
				for i := range cmp.a {
					if cmp.a[i] == cmp.b[i] {
						same++
					}
				}
				if e := nmse(cmp.a, cmp.b); e > bound || math.IsNaN(e) {
					t.Errorf("%s: NMSE %.3g over %.0e", cmp.what, e, bound)
				} else {
					t.Logf("%s: NMSE %.3g, %d of %d outputs equal", cmp.what, e, same, len(cmp.a))
				}
			}
		})
	}
}

// TestAttentionQueryTiles checks the GPU form's prefill over tiles of
// tokens (tuning.attnRows) against a float64 softmax and the same form a
// token per workgroup: tiles that the step fills, leaves partial and
// overruns, GQA groups, windows over rings (rows of one tile with
// different first positions), soft-caps and sinks.
func TestAttentionQueryTiles(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(71))
	lanes := gpuTuning.attnLanes
	type qtCase struct {
		hd, g, n, pos, qt int
		kv                backend.KVType
		window, slots     int
		cap               float32
		sink              bool
	}
	cases := []qtCase{
		{64, 4, 16, 0, 4, backend.KVF16, 0, 0, 0, false},   // a fresh prompt: early rows see few positions
		{64, 4, 13, 100, 4, backend.KVF16, 0, 0, 0, false}, // the last tile partial
		{128, 1, 37, 300, 16, backend.KVF16, 0, 0, 0, false},
		{80, 2, 9, 40, 8, backend.KVF32, 0, 0, 0, false},
		{256, 2, 6, 20, 8, backend.KVF16, 0, 0, 0, false}, // one tile longer than the step
		{64, 8, 11, 200, 2, backend.KVF16, 64, 96, 0, false},
		{128, 4, 10, 150, 4, backend.KVF16, 0, 0, 30, false},
		{64, 4, 12, 60, 4, backend.KVF16, 0, 0, 0, true},
		{32, 2, 9, 3, 8, backend.KVF32, 6, 10, 0, true}, // windows inside one tile
	}
	for _, c := range cases {
		name := fmt.Sprintf("hd%d/g%d/n%d/pos%d/qt%d/%s/w%d/slots%d/cap%g/sink%v", c.hd, c.g, c.n, c.pos, c.qt, c.kv, c.window, c.slots, c.cap, c.sink)
		t.Run(name, func(t *testing.T) {
			ac := attnCase{hd: c.hd, heads: 2 * c.g, kvheads: 2, n: c.n, pos: c.pos, kv: c.kv, window: c.window, slots: c.slots, cap: c.cap, qtile: c.qt}
			in := newAttnInput(ac, c.sink, rng)
			tiled := runAttention(t, d, ac, in, lanes, 0)
			one := ac
			one.qtile = 1
			single := runAttention(t, d, one, in, lanes, 0)
			ref := attnReference(ac, in)
			// both sum in float32 against the shared running maximum, the
			// tiles' position windows cut differently: summation order only
			for _, cmp := range []struct {
				what string
				a, b []float32
			}{{"tiled vs float64", ref, tiled}, {"tiled vs a token per workgroup", single, tiled}} {
				if e := nmse(cmp.a, cmp.b); e > 1e-10 || math.IsNaN(e) {
					t.Errorf("%s: NMSE %.3g over 1e-10", cmp.what, e)
				} else {
					t.Logf("%s: NMSE %.3g", cmp.what, e)
				}
			}
		})
	}
}

// TestAttnTile checks the GPU form's tile choice: attnRows rows over the
// group, no more tokens than the step's, one for a decode step.
func TestAttnTile(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, gpuTuning)
	for _, c := range []struct {
		hd, g, tokens, want int
	}{
		{128, 4, 512, 4}, // an 8B
		{64, 8, 512, 2},  // the 1B shape
		{64, 1, 512, 16}, // multi-head
		{64, 32, 512, 1}, // a group past the rows
		{64, 1, 5, 5},    // a short step
	} {
		if got := d.attnTile(c.hd, c.g, d.attnLanes(c.hd, c.g, false), c.tokens, false); got != c.want {
			t.Errorf("attnTile(hd %d, g %d, %d tokens) = %d, want %d", c.hd, c.g, c.tokens, got, c.want)
		}
	}
	op := attnOp{hd: 128, heads: 32, kvHeads: 8, slots: 4096, tokens: 1}
	d.attnFor(&op, true)
	if op.qtile > 1 {
		t.Errorf("a decode step takes %d tokens per workgroup", op.qtile)
	}
}

// TestAttentionSplitMergeResets: the last split to finish merges and puts
// its arrival counter back to zero, so two split attentions in a row over
// the same partials and counters (two layers), run twice (two steps), give
// the reference every time and leave the counters at zero.
func TestAttentionSplitMergeResets(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(83))
	ac := attnCase{hd: 64, heads: 8, kvheads: 2, n: 1, pos: 299, kv: backend.KVF16, split: uint32(gpuTuning.attnGran)}
	in := newAttnInput(ac, true, rng)
	ctx, qw := ac.ctx(), ac.heads*ac.hd
	const splits = 8
	op := attnOp{label: "attn", q: deviceFloats(t, d, "q", in.q), kc: deviceBytes(t, d, "kc", f16bytes(in.k)), vc: deviceBytes(t, d, "vc", f16bytes(in.v)),
		step: stepBuffer(t, d, ac.n, ac.pos, nil), sinks: deviceFloats(t, d, "sinks", in.sinks),
		hd: ac.hd, heads: ac.heads, kvHeads: ac.kvheads, slots: ctx, qstride: qw, scale: float32(1 / math.Sqrt(float64(ac.hd))),
		tokens: ac.n, splits: splits, lanes: gpuTuning.attnLanes, gran: gpuTuning.attnGran, subgroupSure: int(d.Info.SureSubgroup())}
	op.part = zeroBuffer(t, d, "partials", 4*ac.n*ac.heads*splits*(ac.hd+2))
	op.arrive = zeroBuffer(t, d, "arrivals", 4*ac.n*ac.kvheads)
	outs := []*vulkan.Buffer{zeroBuffer(t, d, "out 1", 4*qw), zeroBuffer(t, d, "out 2", 4*qw)}
	r, err := d.NewRecorder(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Begin(); err != nil {
		t.Fatal(err)
	}
	for _, out := range outs {
		o := op
		o.out = out
		if err := d.recordAttention(r, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	ref := attnReference(ac, in)
	for step := 0; step < 2; step++ {
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
		for i, out := range outs {
			raw := make([]byte, 4*qw)
			if err := out.Read(0, raw); err != nil {
				t.Fatal(err)
			}
			if e := nmse(ref, bytesF32(raw)); e > 1e-10 || math.IsNaN(e) {
				t.Errorf("step %d, attention %d: NMSE %.3g against float64 (an unmerged or stale output)", step, i+1, e)
			}
		}
		raw := make([]byte, 4*ac.kvheads)
		if err := op.arrive.Read(0, raw); err != nil {
			t.Fatal(err)
		}
		for h := 0; h < ac.kvheads; h++ {
			if c := binary.LittleEndian.Uint32(raw[4*h:]); c != 0 {
				t.Errorf("step %d: KV head %d's arrival counter left at %d", step, h, c)
			}
		}
	}
}
