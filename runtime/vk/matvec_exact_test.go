package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

// exactCase is one product for TestExactMatvecMatchesCPU: rows × blocks
// units of typ for ntok tokens, with a fused norm, an epilogue, a
// GELU-gated pair or expert rows (experts > 0: a bank of experts runs of
// rows, k per token, x per pair with perPair).
type exactCase struct {
	typ           ggml.Type
	rows, blocks  int
	ntok          int
	norm, pair    bool
	epi           int
	bias          bool // bias rows (BIAS)
	experts, k    int
	perPair, last bool
	vecDot        bool // Q4_K in vec_dot's lanes (Matrix.vecDot)
	nt            int  // tokens per lane (op.nt), 0: the kernel's choice
	parts         bool // the matrix split into parts of 20 rows
	// ties: x in halves up to ±127, each block of 32 holding ±127, so that
	// x's rounding (scaled by ±1) meets halves with even and odd integer
	// parts; some blocks hold both +127 and -127; and a block of zeros
	ties bool
	// cancel (F16, BF16): each row's values 0 and cols−4 (both in double
	// chain 0) are ±big, their weights 1, every other x small, so that
	// chain 0's double sum rounds away small products' low bits while it
	// is big, and the result is small enough to show it (some outputs
	// then differ from the exact dot product rounded once)
	cancel bool
}

func (c exactCase) String() string {
	s := fmt.Sprintf("%v/%dx%d/tok%d", c.typ, c.rows, c.blocks, c.ntok)
	if c.norm {
		s += "/norm"
	}
	if c.pair {
		s += "/pair"
	}
	if c.epi != epiStore {
		s += fmt.Sprintf("/epi%d", c.epi)
	}
	if c.bias {
		s += "/bias"
	}
	if c.experts > 0 {
		s += fmt.Sprintf("/experts%d-k%d-perpair%v", c.experts, c.k, c.perPair)
	}
	if c.last {
		s += "/last"
	}
	if c.vecDot {
		s += "/vecdot"
	}
	if c.ties {
		s += "/ties"
	}
	if c.nt != 0 {
		s += fmt.Sprintf("/nt%d", c.nt)
	}
	if c.parts {
		s += "/parts"
	}
	if c.cancel {
		s += "/cancel"
	}
	return s
}

// TestExactMatvecMatchesCPU: the exact kernel (matvec_exact.comp) gives
// runtime/quant's bits (quant.MatMul, the CPU backend's products) for
// every type it has, rows of 1, 3 and 9 blocks, 1, 5 and 37 tokens (1, 4
// and 8 tokens a lane), with
// a fused RMS norm (the reference normalises as ggml: ggmlRMSNorm), the
// residual and bias epilogues, bias rows, a GELU-gated pair (its gate
// looked up in the CPU's table), expert banks read per token and per
// pair, and the last token alone. Every output is compared bit for bit.
func TestExactMatvecMatchesCPU(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, cpuTuning)
	rng := rand.New(rand.NewSource(4141))
	types := []ggml.Type{ggml.Q5_0, ggml.Q4_K, ggml.Q8_0, ggml.Q5_1, ggml.Q6_K, ggml.Q4_0, ggml.Q4_1, ggml.Q5_K, ggml.MXFP4, ggml.Q3_K, ggml.Q2_K, ggml.F16, ggml.BF16}
	var cases []exactCase
	for _, typ := range types {
		for _, blocks := range []int{1, 3, 9} {
			cases = append(cases, exactCase{typ: typ, rows: 70, blocks: blocks, ntok: 1})
		}
		cases = append(cases,
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5},
			exactCase{typ: typ, rows: 9, blocks: 3, ntok: 37},
			exactCase{typ: typ, rows: 9, blocks: 3, ntok: 37, nt: 1},
			exactCase{typ: typ, rows: 9, blocks: 3, ntok: 37, nt: 8},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, norm: true},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, ties: true},
			exactCase{typ: typ, rows: 6, blocks: 3, ntok: 5, experts: 4, k: 2},
			exactCase{typ: typ, rows: 6, blocks: 1, ntok: 5, experts: 4, k: 2, perPair: true},
		)
	}
	for _, typ := range []ggml.Type{ggml.F16, ggml.BF16} {
		cases = append(cases, exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, cancel: true})
	}
	// the epilogues and fusions, on the two types deepseek2-Q4_K_M uses most
	for _, typ := range []ggml.Type{ggml.Q5_0, ggml.Q4_K} {
		cases = append(cases,
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, epi: epiResidual},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, epi: epiBias},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, bias: true, epi: epiResidual},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, pair: true, norm: true},
			exactCase{typ: typ, rows: 6, blocks: 3, ntok: 5, experts: 4, k: 2, pair: true, bias: true},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, last: true},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 5, epi: epiBias, parts: true},
			exactCase{typ: typ, rows: 70, blocks: 3, ntok: 1, pair: true, bias: true, parts: true},
		)
	}
	// Mamba2's projections: Q4_K in vec_dot's lanes
	for _, blocks := range []int{1, 3, 9} {
		cases = append(cases, exactCase{typ: ggml.Q4_K, rows: 70, blocks: blocks, ntok: 5, vecDot: true})
	}
	cases = append(cases, exactCase{typ: ggml.Q4_K, rows: 70, blocks: 3, ntok: 1, norm: true, epi: epiResidual, vecDot: true})
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) { exactProduct(t, d, c, rng) })
	}
	// under the GPU layout (shared-x mat-vec, integer dot, rope in the
	// Q|K|V product): the exact kernel still takes every product
	withTuning(t, d, gpuTuning)
	for _, c := range []exactCase{
		{typ: ggml.Q5_0, rows: 70, blocks: 3, ntok: 1, norm: true},
		{typ: ggml.Q4_K, rows: 70, blocks: 3, ntok: 5, norm: true},
		{typ: ggml.Q6_K, rows: 6, blocks: 3, ntok: 5, experts: 4, k: 2},
		{typ: ggml.MXFP4, rows: 6, blocks: 3, ntok: 5, experts: 4, k: 2, pair: true, bias: true},
	} {
		t.Run("gpu/"+c.String(), func(t *testing.T) { exactProduct(t, d, c, rng) })
	}
}

// TestExactQuantUpload: weights.exactQuant marks every matrix of a model
// whose matrices are all F32 or of a type the exact kernel has
// (Matrix.cpuOrder), none of a model with one other type (every file
// here now has only such types: F16 is taken from exactTypes for one
// case),
// and without it a quantized model's matrices keep the kernels' own orders;
// Mamba2's in and out projections, and only they, sum in vec_dot's lanes
// (Matrix.vecDot), as the CPU backend's.
func TestExactQuantUpload(t *testing.T) {
	for _, c := range []struct {
		name         string
		mamba, whole bool
		without      ggml.Type // a type taken from exactTypes, 0 none
	}{
		{"2026b/synth-deepseek2-Q4_K_M.gguf", false, true, 0},
		{"2026b/synth-granitehybrid-Q4_K_M.gguf", true, true, 0}, // F16 experts
		{"2026b/synth-granitehybrid-Q4_K_M.gguf", true, false, ggml.F16},
		{"2026/synth-gpt-oss-MXFP4_MOE.gguf", false, true, 0}, // MXFP4 experts
	} {
		name := c.name
		if c.without != 0 {
			name += "/without-" + c.without.String()
		}
		t.Run(name, func(t *testing.T) {
			if c.without != 0 {
				delete(exactTypes, c.without)
				defer func() { exactTypes[c.without] = true }()
			}
			exactUpload(t, c.name, c.mamba, c.whole)
		})
	}
}

func exactUpload(t *testing.T, name string, hasMamba, whole bool) {
	d := testDevice(t)
	p := mustPlan(t, loadModel(t, testenv.Model(t, name)), 64)
	mamba := map[*Matrix]bool{}
	for _, on := range []bool{false, true} {
		var bufs []*vulkan.Buffer
		d.track(&bufs)
		ws := weights{exactQuant: on}
		err := ws.upload(d, p, int(alignUp(uint64(p.Embd), 256)))
		d.track(nil)
		for _, b := range bufs {
			b.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ws.layers {
			for _, bw := range l {
				if bw.mamba != nil {
					mamba[bw.mamba.in], mamba[bw.mamba.out] = true, true
				}
			}
		}
		if (len(mamba) > 0) != hasMamba {
			t.Fatalf("%d Mamba2 projections, want some: %v", len(mamba), hasMamba)
		}
		marked, other := 0, 0
		for _, m := range ws.all {
			if m.vecDot != mamba[m] {
				t.Errorf("%s: vecDot %v", m.Name, m.vecDot)
			}
			want := on && whole
			if m.cpuOrder != want {
				t.Errorf("exactQuant %v: %s (%v) has cpuOrder %v", on, m.Name, m.Type, m.cpuOrder)
			}
			if exactTypes[m.Type] {
				marked++
			} else {
				other++
			}
		}
		if marked == 0 || other == 0 {
			t.Fatalf("the model's %d matrices: %d of exact types, %d others; the test wants both", len(ws.all), marked, other)
		}
	}
}

func exactProduct(t *testing.T, d *gpu, c exactCase, rng *rand.Rand) {
	unit := layouts[c.typ].unit
	cols := c.blocks * unit
	bankRows := c.rows * max(c.experts, 1)
	w := randomWeights(t, c.typ, bankRows, cols, rng)
	one := quant.FP32ToFP16(1)
	if c.typ == ggml.BF16 {
		one = quant.FP32ToBF16(1)
	}
	if c.cancel {
		for r := 0; r < bankRows; r++ {
			binary.LittleEndian.PutUint16(w[2*r*cols:], one)
			binary.LittleEndian.PutUint16(w[2*(r*cols+cols-4):], one)
		}
	}
	if c.parts {
		saved := d.partBytes
		d.partBytes = 20 * layouts[c.typ].packedBytes(1, cols)
		defer func() { d.partBytes = saved }()
	}
	m, err := d.uploadMatrix("w", c.typ, bankRows, cols, w)
	if err != nil {
		t.Fatal(err)
	}
	if c.parts && len(m.parts) < 2 {
		t.Fatalf("%d parts, want several", len(m.parts))
	}
	m.cpuOrder = true // weights.exactQuant's
	m.vecDot = c.vecDot
	var m2 *Matrix
	var w2 []byte
	if c.pair {
		w2 = randomWeights(t, c.typ, bankRows, cols, rng)
		if m2, err = d.uploadMatrix("w2", c.typ, bankRows, cols, w2); err != nil {
			t.Fatal(err)
		}
		m2.cpuOrder = true
	}
	pairs := c.ntok * max(c.k, 1) // outputs' rows of y
	xrows := c.ntok
	if c.perPair {
		xrows = pairs
	}
	x := make([]float32, xrows*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		if c.ties {
			x[i] = float32(rng.Intn(509)-254) / 2
		}
	}
	if c.ties {
		for b := 0; b < len(x); b += 32 {
			x[b+rng.Intn(32)] = float32(127 * (1 - 2*rng.Intn(2)))
		}
		clear(x[:unit])
	}
	if c.cancel {
		big := float32(1 << 15) // F16's largest power of 2
		if c.typ == ggml.BF16 {
			big = 1 << 40
		}
		for r := 0; r < xrows; r++ {
			xr := x[r*cols : (r+1)*cols]
			for i := range xr {
				xr[i] = float32(rng.NormFloat64() / 4096)
			}
			xr[0], xr[cols-4] = big, -big
		}
	}
	nw := make([]float32, cols)
	for i := range nw {
		nw[i] = float32(0.5 + rng.Float64())
	}
	const eps = 1e-6
	ids := make([]uint32, pairs)
	for i := range ids {
		ids[i] = uint32(rng.Intn(max(c.experts, 1)))
	}
	y0 := make([]float32, pairs*c.rows) // y before the product (the residual's)
	for i := range y0 {
		y0[i] = float32(rng.NormFloat64())
	}
	bias := make([]float32, bankRows)
	bias2 := make([]float32, bankRows)
	for i := range bias {
		bias[i], bias2[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}

	// the CPU backend's results
	want := make([]float32, pairs*c.rows)
	rb, _ := c.typ.RowBytes(uint64(cols))
	for pr := 0; pr < pairs; pr++ {
		xr := pr
		if c.experts > 0 && !c.perPair {
			xr = pr / c.k
		}
		xv := x[xr*cols : (xr+1)*cols]
		if c.norm {
			xv = ggmlRMSNorm(xv, nw, eps)
		}
		e := int(ids[pr])
		if c.experts == 0 {
			e = 0
		}
		lo, hi := uint64(e*c.rows)*rb, uint64((e+1)*c.rows)*rb
		out := want[pr*c.rows : (pr+1)*c.rows]
		quant.MatMul(out, quant.Matrix{Type: c.typ, Rows: c.rows, Cols: cols, Data: w[lo:hi], VecDot: c.vecDot}, xv, 1)
		var up []float32
		if c.pair {
			up = make([]float32, c.rows)
			quant.MatMul(up, quant.Matrix{Type: c.typ, Rows: c.rows, Cols: cols, Data: w2[lo:hi]}, xv, 1)
		}
		for r := range out {
			v := out[r]
			if c.bias {
				v += bias[e*c.rows+r]
			}
			if c.pair {
				u := up[r]
				if c.bias {
					u += bias2[e*c.rows+r]
				}
				v = refGELU(v) * u
			}
			switch c.epi {
			case epiResidual:
				v += y0[pr*c.rows+r]
			case epiBias:
				v += bias[r]
			}
			out[r] = v
		}
	}

	if c.cancel {
		if n := offExactSum(c.typ, w[:uint64(c.rows)*rb], x[:cols], want[:c.rows]); n == 0 {
			t.Fatalf("%v: every output is the exact sum rounded once: the case does not meet the double sums' rounding", c)
		} else {
			t.Logf("%d of %d outputs of token 0 differ from the exact sum rounded once", n, c.rows)
		}
	}
	xb := deviceFloats(t, d, "x", x)
	nwb := deviceFloats(t, d, "nw", nw)
	yb := deviceFloats(t, d, "y", y0)
	bb := deviceFloats(t, d, "bias", bias)
	bb2 := deviceFloats(t, d, "bias2", bias2)
	xq, err := d.NewBuffer("xq", uint64(4*xrows*xqBound(cols)), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
	binary.LittleEndian.PutUint32(step.Mapped(), uint32(c.ntok))
	idb, _ := d.NewBuffer("ids", uint64(4*len(ids)+64), vulkan.MemDevice)
	raw := make([]byte, 4*len(ids))
	for i, v := range ids {
		binary.LittleEndian.PutUint32(raw[4*i:], v)
	}
	idb.Write(0, raw)

	op := matvecOp{label: "exact", m: m, m2: m2, x: xb, xstride: cols, y: yb, ystride: c.rows, epi: c.epi, tokens: c.ntok, step: step, xq: xq, last: c.last, nt: c.nt}
	if c.norm {
		op.norm, op.eps = nwb, eps
	}
	if c.epi == epiBias {
		op.bias = bb
	}
	if c.bias {
		op.rbias = bb
		if c.pair {
			op.rbias2 = bb2
		}
	}
	if c.pair {
		op.act = actGELU
	}
	if c.experts > 0 {
		op.moe = moeRows{ids: idb, k: c.k, experts: c.experts, perPair: c.perPair}
	}
	if !d.useExact(&op) {
		t.Fatalf("%v: the exact kernel does not take the product", c)
	}
	if c.experts > 0 && c.ntok > 1 {
		if d.useGrouped(&op) {
			t.Fatalf("%v: the grouped product takes an exact bank", c)
		}
	}
	record := func(r *vulkan.Recorder) error { return d.matvec(r, op) }
	if c.experts > 0 {
		record = func(r *vulkan.Recorder) error { return d.expertProduct(r, op, nil) }
	}
	runOnce(t, d, record)
	got := bytesF32(readBack(t, yb, len(want)))
	bad := 0
	for i := range want {
		if c.last && i/c.rows != 0 {
			// only the last token's rows, at row 0 of y
			continue
		}
		wi := want[i]
		if c.last {
			wi = want[(pairs-1)*c.rows+i]
		}
		if math.Float32bits(got[i]) != math.Float32bits(wi) {
			if bad < 3 {
				t.Errorf("pair %d row %d = %v (%08x), CPU %v (%08x)", i/c.rows, i%c.rows, got[i], math.Float32bits(got[i]), wi, math.Float32bits(wi))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d outputs differ from the CPU's bits", bad, len(want))
	}
}

// offExactSum counts the outputs in want (F16 or BF16 rows w times x)
// that differ from the exact dot product of the rounded x, rounded once.
func offExactSum(typ ggml.Type, w []byte, x []float32, want []float32) int {
	cols := len(x)
	val := func(h uint16) float64 {
		if typ == ggml.BF16 {
			return float64(quant.BF16ToFP32(h))
		}
		return float64(quant.FP16ToFP32(h))
	}
	n := 0
	for r := range want {
		sum := new(big.Float).SetPrec(2000)
		for i, v := range x {
			h := quant.FP32ToFP16(v)
			if typ == ggml.BF16 {
				h = quant.FP32ToBF16(v)
			}
			p := new(big.Float).SetPrec(2000).SetFloat64(val(binary.LittleEndian.Uint16(w[2*(r*cols+i):])))
			sum.Add(sum, p.Mul(p, new(big.Float).SetFloat64(val(h))))
		}
		if f, _ := sum.Float32(); math.Float32bits(f) != math.Float32bits(want[r]) {
			n++
		}
	}
	return n
}

// BenchmarkExactProduct times the exact kernel against the kernels the
// same product takes otherwise (the mat-vec for one token, the tiled
// product for a prefill chunk), on a 2048x2048 matrix of the two types
// deepseek2-Q4_K_M uses most, the chunk with 1, 4 and 8 tokens a lane
// (exactNT), reporting GFLOP/s of CPU time as well as of wall time
// (go test -run X -bench ExactProduct -benchtime 5x ./runtime/vk).
func BenchmarkExactProduct(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewSource(1))
	const rows, cols = 2048, 2048
	for _, typ := range []ggml.Type{ggml.Q4_K, ggml.Q5_0} {
		w := randomWeights(b, typ, rows, cols, rng)
		m, err := d.uploadMatrix("w", typ, rows, cols, w)
		if err != nil {
			b.Fatal(err)
		}
		for _, tokens := range []int{1, prefillChunk} {
			x, _ := d.NewBuffer("x", uint64(4*cols*tokens), vulkan.MemDevice)
			x.Write(0, f32bytes(randomVec(cols*tokens, rng)))
			y, _ := d.NewBuffer("y", uint64(4*rows*tokens), vulkan.MemDevice)
			xq, _ := d.NewBuffer("xq", uint64(4*tokens*xqBound(cols)), vulkan.MemDevice)
			step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
			binary.LittleEndian.PutUint32(step.Mapped(), uint32(tokens))
			nts := []int{0, 1} // the normal kernels, then the exact one
			if tokens > 1 {
				nts = append(nts, 4, 8) // tokens per lane (exactNT)
			}
			for _, nt := range nts {
				exact := nt > 0
				kind := "normal"
				if exact {
					kind = fmt.Sprintf("exact-nt%d", nt)
				}
				b.Run(fmt.Sprintf("%s/%dx%d/tok%d/%s", typ, rows, cols, tokens, kind), func(b *testing.B) {
					m.cpuOrder = exact
					defer func() { m.cpuOrder = false }()
					op := matvecOp{label: kind, m: m, x: x, xstride: cols, y: y, ystride: rows, tokens: tokens, step: step, xq: xq, nt: nt}
					benchRecorded(b, d, 2*float64(rows)*float64(cols)*float64(tokens), func(r *vulkan.Recorder) error { return d.matvec(r, op) })
				})
			}
		}
	}
}
