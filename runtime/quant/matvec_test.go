package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"runtime"
	"testing"

	"vkchat/runtime/ggml"
)

var allTypes = []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0,
	ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.MXFP4}

// synthMatrix returns a llama.cpp-quantized weight of type typ from the synth
// files, preferring one with 512 columns (two K-quant super-blocks per row).
func synthMatrix(t testing.TB, typ ggml.Type) Matrix {
	t.Helper()
	var best Matrix
	// MXFP4 is only in the 2026 MoE files, as expert banks: a 3-D
	// tensor is a matrix of rows × experts rows.
	for _, name := range append([]string{"F32"}, append(synthFiles, "2026/qwen3moe-MXFP4_MOE")...) {
		dir, base := path.Split(name)
		f := openModel(t, dir+"synth-"+base+".gguf")
		for i := range f.Tensors {
			tn := &f.Tensors[i]
			if tn.Type != typ || len(tn.Dims) < 2 || len(tn.Dims) > 3 {
				continue
			}
			rows := int(tn.Dims[1])
			if len(tn.Dims) == 3 {
				rows *= int(tn.Dims[2])
			}
			m := Matrix{Type: typ, Cols: int(tn.Dims[0]), Rows: rows, Data: f.TensorData(tn)}
			if m.Cols > best.Cols {
				best = m
			}
			if m.Cols >= 512 {
				return best
			}
		}
	}
	if best.Data == nil {
		t.Skipf("no %v tensor in the synth files", typ)
	}
	return best
}

func randVec(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func dequantRows(t testing.TB, m Matrix) []float32 {
	w := make([]float32, m.Rows*m.Cols)
	if err := Dequantize(m.Type, m.Data, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// dot64 returns sum w[i]*a[i] and sum |w[i]*a[i]| in float64.
func dot64(w, a []float32) (s, abs float64) {
	for i := range a {
		p := float64(w[i]) * float64(a[i])
		s += p
		abs += math.Abs(p)
	}
	return s, abs
}

// maxNMSE bounds sum_r (MatVec_r - exact_r)^2 / sum_r exact_r^2 for a
// standard normal x, exact_r being the float64 dot of the dequantized row
// with x. It is the error llama.cpp's activation conversion introduces: none
// for F32 beyond float32 products, fp16 or bf16 rounding of x, or 8-bit
// quantization in blocks of 32 (Q8_0, Q8_1) or 256 (Q8_K). Measured values
// are logged; the bounds are about twice those.
var maxNMSE = map[ggml.Type]float64{
	ggml.F32:  1e-13,
	ggml.F16:  5e-8,
	ggml.BF16: 3e-6,
	ggml.Q4_0: 8e-5, ggml.Q4_1: 8e-5, ggml.Q5_0: 8e-5, ggml.Q5_1: 8e-5, ggml.Q8_0: 8e-5,
	ggml.Q2_K: 1e-4, ggml.Q3_K: 1e-4, ggml.Q4_K: 1e-4, ggml.Q5_K: 1e-4, ggml.Q6_K: 1e-4,
	ggml.MXFP4: 8e-5,
}

// activation returns x as llama.cpp's kernels see it: converted to the
// weight type's vec_dot_type and back to floats. For Q8_0 it goes through
// the public Quantize/Dequantize, which TestQuantizeMatchesLlamaCpp pins to
// llama.cpp's bytes; Q8_1 has the same quants and scale; Q8_K has no file
// to compare against and is read from the package's own conversion, which
// TestQ8KActivation checks against the properties ggml's quantizer has.
func activation(t testing.TB, typ ggml.Type, x []float32) []float32 {
	vt := formats[typ].vecType
	out := make([]float32, len(x))
	switch vt {
	case ggml.F32:
		copy(out, x)
	case ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q8_1:
		q := vt
		if q == ggml.Q8_1 {
			q = ggml.Q8_0
		}
		b, err := Quantize(q, x)
		if err != nil {
			t.Fatal(err)
		}
		if err := Dequantize(q, b, out); err != nil {
			t.Fatal(err)
		}
	case ggml.Q8_K:
		var a acts
		a.prepare(ggml.Q8_K, x, len(x), 1, false)
		v := a.view(0)
		for i, q := range v.qs {
			out[i] = v.d[i/256] * float32(q)
		}
	}
	return out
}

// q8_1Correction is what the Q8_1 activation adds to a Q4_1/Q5_1 row's dot
// beyond the converted-activation dot: ggml carries s = fp16(d*sum(q)), with
// d the unrounded block scale, for the weight minimum m, where the plain dot
// has m * fp16(d) * sum(q). It is zero for other types.
func q8_1Correction(typ ggml.Type, row []byte, x []float32) float64 {
	if formats[typ].vecType != ggml.Q8_1 {
		return 0
	}
	bb := formats[typ].bytes
	var c float64
	for b := 0; b < len(x)/32; b++ {
		xb := x[32*b : 32*b+32]
		var amax float32
		for _, v := range xb {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		q, err := Quantize(ggml.Q8_0, xb)
		if err != nil {
			panic(err)
		}
		var sum int32
		for _, v := range q[2:] {
			sum += int32(int8(v))
		}
		s := FP16ToFP32(FP32ToFP16(float32(sum) * (amax / 127)))
		dy := FP16ToFP32(uint16(q[0]) | uint16(q[1])<<8)
		m := FP16ToFP32(uint16(row[b*bb+2]) | uint16(row[b*bb+3])<<8)
		c += float64(m) * (float64(s) - float64(dy)*float64(sum))
	}
	return c
}

// maxRelDev bounds |MatVec_r - sum_i w_i*a_i - q8_1Correction| /
// sum_i |w_i*a_i|, a being the converted activation: what is left is float32
// rounding of ggml's per-block float arithmetic. A wrong integer sum fails
// it: one unit in one block moves a row's result by about 1e-5 of its
// magnitude here.
func maxRelDev(typ ggml.Type) float64 {
	switch formats[typ].vecType {
	case ggml.F32, ggml.F16, ggml.BF16:
		return 1e-7
	}
	return 5e-7
}

func TestMatVecAgainstDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range allTypes {
		t.Run(typ.String(), func(t *testing.T) {
			m := synthMatrix(t, typ)
			w := dequantRows(t, m)
			x := randVec(r, m.Cols)
			a := activation(t, typ, x)
			got := make([]float32, m.Rows)
			MatVec(got, m, x)
			rb := len(m.Data) / m.Rows
			var errMV, errDR, den, worstDev float64
			for row := 0; row < m.Rows; row++ {
				wr := w[row*m.Cols : (row+1)*m.Cols]
				exact, _ := dot64(wr, x)
				den += exact * exact
				dr := float64(DotRow(typ, m.Data[row*rb:(row+1)*rb], x))
				errDR += (dr - exact) * (dr - exact)
				errMV += (float64(got[row]) - exact) * (float64(got[row]) - exact)
				viaAct, abs := dot64(wr, a)
				viaAct += q8_1Correction(typ, m.Data[row*rb:(row+1)*rb], x)
				worstDev = max(worstDev, math.Abs(float64(got[row])-viaAct)/abs)
			}
			nmseMV, nmseDR := errMV/den, errDR/den
			t.Logf("%v %dx%d: NMSE MatVec %.3g, DotRow %.3g; max deviation from the converted-activation dot %.3g",
				typ, m.Rows, m.Cols, nmseMV, nmseDR, worstDev)
			if nmseDR > 1e-14 {
				t.Errorf("DotRow NMSE %.3g > 1e-14: it is not the exact definition", nmseDR)
			}
			if nmseMV > maxNMSE[typ] {
				t.Errorf("MatVec NMSE %.3g > %.3g", nmseMV, maxNMSE[typ])
			}
			if nmseMV < 1e-16 && typ != ggml.F32 {
				t.Errorf("MatVec NMSE %.3g: activations were not converted as llama.cpp does", nmseMV)
			}
			if worstDev > maxRelDev(typ) {
				t.Errorf("MatVec deviates %.3g (relative) from the dot with the converted activation, bound %.3g", worstDev, maxRelDev(typ))
			}
		})
	}
}

// randomMatrix fills a matrix with random bytes, then overwrites the fp16
// scales with small normal values so every block is finite: it exercises
// quant patterns (all 16/32/64 codes, every scale and min) that trained or
// synthetic weights rarely reach.
func randomMatrix(r *rand.Rand, typ ggml.Type, rows, cols int) Matrix {
	f := formats[typ]
	rb, _ := f.rowBytes(typ, cols)
	data := make([]byte, rows*rb)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	var halfs []int // offsets of fp16 fields within a block
	switch typ {
	case ggml.F16:
		halfs = []int{0}
	case ggml.Q4_0, ggml.Q5_0, ggml.Q8_0:
		halfs = []int{0}
	case ggml.Q4_1, ggml.Q5_1, ggml.Q4_K, ggml.Q5_K:
		halfs = []int{0, 2}
	case ggml.Q2_K:
		halfs = []int{80, 82}
	case ggml.Q3_K:
		halfs = []int{108}
	case ggml.Q6_K:
		halfs = []int{208}
	case ggml.MXFP4:
		// E8M0 scales of ordinary weights (2^-10..2^2), not random
		// exponents up to 2^127 whose products overflow
		for i := 0; i < len(data); i += 17 {
			data[i] = byte(118 + r.IntN(12))
		}
	case ggml.F32:
		for i := 0; i < len(data); i += 4 {
			putF32(data[i:], float32(r.NormFloat64()))
		}
	case ggml.BF16:
		for i := 0; i < len(data); i += 2 {
			v := FP32ToBF16(float32(r.NormFloat64()))
			data[i], data[i+1] = byte(v), byte(v>>8)
		}
	}
	for b := 0; b < len(data); b += f.bytes {
		for _, o := range halfs {
			v := FP32ToFP16(float32(r.NormFloat64() * 0.01))
			data[b+o], data[b+o+1] = byte(v), byte(v>>8)
		}
	}
	return Matrix{Type: typ, Rows: rows, Cols: cols, Data: data}
}

func putF32(b []byte, f float32) {
	u := math.Float32bits(f)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// TestMatVecRandomBlocks repeats the converted-activation check on random
// blocks, and on inputs with outliers and exact zeros (an all-zero Q8 block).
func TestMatVecRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range allTypes {
		m := randomMatrix(r, typ, 64, 768)
		w := dequantRows(t, m)
		x := randVec(r, m.Cols)
		x[5] = 40
		for i := 256; i < 512; i++ {
			x[i] = 0
		}
		a := activation(t, typ, x)
		got := make([]float32, m.Rows)
		MatVec(got, m, x)
		for row := 0; row < m.Rows; row++ {
			viaAct, abs := dot64(w[row*m.Cols:(row+1)*m.Cols], a)
			rb := len(m.Data) / m.Rows
			viaAct += q8_1Correction(typ, m.Data[row*rb:(row+1)*rb], x)
			if dev := math.Abs(float64(got[row])-viaAct) / abs; dev > maxRelDev(typ) {
				t.Errorf("%v row %d: %g, converted-activation dot %g (relative deviation %.3g)", typ, row, got[row], viaAct, dev)
				break
			}
		}
	}
}

// TestMatMulMatchesMatVec checks that batching, the thread count and the
// inline path change nothing: every result is bit-identical.
func TestMatMulMatchesMatVec(t *testing.T) {
	defer SetThreads(0)
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range allTypes {
		for _, rows := range []int{3, 200} { // 3 rows run inline, 200 on the pool
			m := randomMatrix(r, typ, rows, 512)
			const n = 5
			x := randVec(r, n*m.Cols)
			want := make([]float32, n*m.Rows)
			SetThreads(1)
			for v := 0; v < n; v++ {
				MatVec(want[v*m.Rows:(v+1)*m.Rows], m, x[v*m.Cols:(v+1)*m.Cols])
			}
			for _, threads := range []int{1, 2, 7} {
				SetThreads(threads)
				got := make([]float32, n*m.Rows)
				MatMul(got, m, x, n)
				one := make([]float32, m.Rows)
				MatVec(one, m, x[2*m.Cols:3*m.Cols])
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v %d rows, %d threads: MatMul[%d] = %g, MatVec gives %g", typ, rows, threads, i, got[i], want[i])
					}
				}
				for i := range one {
					if one[i] != want[2*m.Rows+i] {
						t.Fatalf("%v %d rows, %d threads: MatVec differs from the 1-thread result at %d", typ, rows, threads, i)
					}
				}
			}
		}
	}
}

func TestMatVecConcurrentCallers(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	m := randomMatrix(r, ggml.Q4_0, 300, 1024)
	x := randVec(r, m.Cols)
	want := make([]float32, m.Rows)
	MatVec(want, m, x)
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			got := make([]float32, m.Rows)
			for it := 0; it < 20; it++ {
				MatVec(got, m, x)
				for i := range got {
					if got[i] != want[i] {
						errs <- fmt.Errorf("goroutine result differs at %d", i)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestMatVecPanicsOnBadSizes(t *testing.T) {
	m := Matrix{Type: ggml.Q4_0, Rows: 2, Cols: 64, Data: make([]byte, 2*36)}
	for name, f := range map[string]func(){
		"short x":      func() { MatVec(make([]float32, 2), m, make([]float32, 63)) },
		"short dst":    func() { MatVec(make([]float32, 1), m, make([]float32, 64)) },
		"short data":   func() { m := m; m.Data = m.Data[:71]; MatVec(make([]float32, 2), m, make([]float32, 64)) },
		"partial blk":  func() { m := m; m.Cols = 48; MatVec(make([]float32, 2), m, make([]float32, 48)) },
		"matmul n":     func() { MatMul(make([]float32, 4), m, make([]float32, 64), 2) },
		"unknown type": func() { m := m; m.Type = ggml.I32; MatVec(make([]float32, 2), m, make([]float32, 64)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestMatMulTiles uses enough vectors that MatMul splits them into several
// cache tiles (and a ragged last tile); every result must still equal
// MatVec's bit for bit.
func TestMatMulTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q4_0, ggml.Q4_1, ggml.Q6_K} {
		m := randomMatrix(r, typ, 37, 2048)
		const n = 53
		x := randVec(r, n*m.Cols)
		var a acts
		a.prepare(formats[typ].vecType, x[:m.Cols], m.Cols, 1, false)
		if tile := tileBytes / a.bytesPerVector(); tile >= n || n%tile == 0 {
			t.Fatalf("%v: tile of %d vectors does not exercise a ragged tiling of %d", typ, tile, n)
		}
		got := make([]float32, n*m.Rows)
		MatMul(got, m, x, n)
		one := make([]float32, m.Rows)
		for v := 0; v < n; v++ {
			MatVec(one, m, x[v*m.Cols:(v+1)*m.Cols])
			for i := range one {
				if math.Float32bits(one[i]) != math.Float32bits(got[v*m.Rows+i]) {
					t.Fatalf("%v vector %d row %d: MatMul %g, MatVec %g", typ, v, i, got[v*m.Rows+i], one[i])
				}
			}
		}
	}
}

// TestQ8KActivation checks the Q8_K conversion against what ggml's
// quantize_row_q8_K_ref guarantees: the largest-magnitude element maps to
// exactly -127 (the scale is -max/127, negative for a positive max), the
// others are nearest-even rounded and clamped to 127, bsums are the sums of
// each 16 quants, and an all-zero block has d = 0.
func TestQ8KActivation(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	x := randVec(r, 1024)
	x[3] = 9         // positive max of block 0
	x[256+77] = -9.5 // negative max of block 1
	for i := 512; i < 768; i++ {
		x[i] = 0
	}
	var a acts
	a.prepare(ggml.Q8_K, x, len(x), 1, false)
	v := a.view(0)
	for b := 0; b < 4; b++ {
		xb, qb := x[256*b:256*b+256], v.qs[256*b:256*b+256]
		var mx, amax float32
		arg := 0
		for i, f := range xb {
			if abs32(f) > amax {
				amax, mx, arg = abs32(f), f, i
			}
		}
		if amax == 0 {
			if v.d[b] != 0 {
				t.Errorf("zero block %d: d = %g", b, v.d[b])
			}
			continue
		}
		iscale := -127 / mx
		if v.d[b] != 1/iscale || qb[arg] != -127 {
			t.Errorf("block %d: d = %g, q[max] = %d; want %g, -127", b, v.d[b], qb[arg], 1/iscale)
		}
		for i, f := range xb {
			want := math.RoundToEven(float64(float32(iscale * f)))
			if want > 127 {
				want = 127
			}
			if float64(qb[i]) != want {
				t.Fatalf("block %d element %d: q = %d, want %g", b, i, qb[i], want)
			}
		}
		for j := 0; j < 16; j++ {
			var s int32
			for _, q := range qb[16*j : 16*j+16] {
				s += int32(q)
			}
			if v.sums[16*b+j] != s {
				t.Errorf("block %d bsum %d = %d, want %d", b, j, v.sums[16*b+j], s)
			}
		}
	}
}

// TestMatVecEmpty: zero-sized shapes are legal and give empty sums.
func TestMatVecEmpty(t *testing.T) {
	for _, typ := range allTypes {
		dst := []float32{7, 7}
		MatVec(dst, Matrix{Type: typ, Rows: 2, Cols: 0}, nil)
		if dst[0] != 0 || dst[1] != 0 {
			t.Errorf("%v: 2x0 product = %v, want zeros", typ, dst)
		}
		MatVec(nil, Matrix{Type: typ, Rows: 0, Cols: 256}, make([]float32, 256))
		MatMul(nil, Matrix{Type: typ, Rows: 3, Cols: 256, Data: make([]byte, 3*formats[typ].bytes*256/formats[typ].elems)}, nil, 0)
	}
}

// TestMatVecMisaligned: the float kernels read aligned rows in place; a row
// at an odd address must take the decoding path and give the same bits.
func TestMatVecMisaligned(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
		m := randomMatrix(r, typ, 5, 96)
		x := randVec(r, m.Cols)
		want := make([]float32, m.Rows)
		MatVec(want, m, x)
		buf := make([]byte, len(m.Data)+1)
		copy(buf[1:], m.Data)
		m.Data = buf[1:]
		got := make([]float32, m.Rows)
		MatVec(got, m, x)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("%v row %d: misaligned %g, aligned %g", typ, i, got[i], want[i])
			}
		}
	}
}

// TestMatVecAllocs: once the pools are warm, products allocate nothing, on
// the inline path and on the worker pool. testing.AllocsPerRun runs with
// GOMAXPROCS=1, where products stay on the caller, so the pool path is
// measured separately over many calls. The runtime may allocate a few
// objects of its own there (the waiter of a blocked channel receive comes
// from a per-P cache that garbage collections empty; a loaded CI machine once
// saw 13 in 200 calls); an allocation per call would show as at least 1,000,
// so the bound of 100 separates the two by an order of magnitude each way.
func TestMatVecAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, typ := range allTypes {
		m := randomMatrix(r, typ, 256, 512)
		x := randVec(r, 3*m.Cols)
		dst := make([]float32, 3*m.Rows)
		run := func() {
			MatVec(dst[:m.Rows], m, x[:m.Cols])
			MatMul(dst, m, x, 3)
		}
		run()
		// AllocsPerRun counts every goroutine's allocations: a pool or team
		// helper of an earlier call that runs late (on a machine busy with
		// other tests) can allocate during one measurement. An allocation
		// of the call itself shows in every measurement, so the least of
		// three is what is asserted.
		n := testing.AllocsPerRun(20, run)
		for try := 1; try < 3 && n != 0; try++ {
			n = min(n, testing.AllocsPerRun(20, run))
		}
		if n != 0 {
			t.Errorf("%v %dx%d: %v allocations per MatVec+MatMul on one P (the least of three measurements)", typ, m.Rows, m.Cols, n)
		}
		if runtime.GOMAXPROCS(0) < 2 {
			continue
		}
		for i := 0; i < 50; i++ {
			run()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const calls = 1000
		for i := 0; i < calls; i++ {
			run()
		}
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; n > calls/10 {
			t.Errorf("%v: %d allocations in %d pooled MatVec+MatMul calls (%d garbage collections)",
				typ, n, calls, after.NumGC-before.NumGC)
		}
	}
}

// TestF32ProductOrders: F32 products sum as llama.cpp's x86 kernels do —
// tinyBLAS's single 8-lane FMA accumulator per output (MUL_MAT, rows of
// whole 8-lane steps), ggml_vec_dot_f32's four 8-lane FMA accumulators
// for a RowByRow product (MUL_MAT_ID) and rows tinyBLAS refuses — the same
// bits for one vector as for a batch, on the native and the portable path.
func TestF32ProductOrders(t *testing.T) {
	// Known answers, worked by hand: row [2^24, 1 × 31] against ones. The
	// exact sum is 2^24+31; tinyBLAS gets 2^24+28 (lane 0 drops each of
	// its three 1s to round-to-even), ggml_vec_dot_f32 2^24+30 (lane 0 of
	// accumulators 0+2 rounds 2^24+1 to even).
	w := make([]float32, 32)
	w[0] = 1 << 24
	for i := 1; i < 32; i++ {
		w[i] = 1
	}
	data := make([]byte, 2*4*32)
	for i, v := range append(append([]float32{}, w...), w...) {
		putF32(data[4*i:], v)
	}
	ones := make([]float32, 2*32)
	for i := range ones {
		ones[i] = 1
	}
	for _, path := range []struct {
		name string
		run  func(func())
	}{{"native", func(f func()) { f() }}, {"portable", withPortable}} {
		path.run(func() {
			for _, byRow := range []bool{false, true} {
				m := Matrix{Type: ggml.F32, Rows: 2, Cols: 32, Data: data, RowByRow: byRow}
				want := float32(1<<24 + 28)
				if byRow {
					want = 1<<24 + 30
				}
				one := make([]float32, 2)
				MatVec(one, m, ones[:32])
				batch := make([]float32, 4)
				MatMul(batch, m, ones, 2)
				for i, g := range append(one, batch...) {
					if g != want {
						t.Errorf("%s, row by row %v: output %d = %.0f, want %.0f", path.name, byRow, i, g, want)
					}
				}
			}
		})
	}
	// random shapes: rows not a multiple of 8 (ggml_vec_dot_f32 with its
	// tail), ragged row and vector tiles
	r := rand.New(rand.NewPCG(41, 42))
	for _, cols := range []int{8, 12, 40, 96, 172, 256} {
		for _, n := range []int{1, 2, 5, 9} {
			for _, byRow := range []bool{false, true} {
				m := randomMatrix(r, ggml.F32, 13, cols)
				m.RowByRow = byRow
				x := randVec(r, n*cols)
				native := make([]float32, n*m.Rows)
				portable := make([]float32, n*m.Rows)
				MatMul(native, m, x, n)
				withPortable(func() { MatMul(portable, m, x, n) })
				for k := range native {
					v, row := k/m.Rows, k%m.Rows
					wrow := f32Row(m.Data[row*4*cols:], cols)
					want := vecDotF32(wrow, x[v*cols:(v+1)*cols])
					if cols%8 == 0 && !byRow {
						want = gemmDotF32(wrow, x[v*cols:(v+1)*cols])
					}
					if math.Float32bits(native[k]) != math.Float32bits(want) || math.Float32bits(portable[k]) != math.Float32bits(want) {
						t.Fatalf("%d cols n=%d row by row %v: vector %d row %d: native %g, portable %g, want %g",
							cols, n, byRow, v, row, native[k], portable[k], want)
					}
				}
			}
		}
	}
}

// TestAVX2LaneTypes: Q8_0, Q5_0 and Q4_1 products round as ggml-cpu's
// x86 AVX2 ggml_vec_dot_q8_0_q8_0, _q5_0_q8_0 and _q4_1_q8_1, the kernels
// llama.cpp's references ran: eight float lanes of four consecutive
// elements' integer sums, each lane fma(dx·dy, sum, lane) block after
// block, then hsum_float_8 (Q4_1: plus summs, fma(m, s, summs) per block),
// written out here from ggml's description rather than from the kernels
// under test. The generic per-block order
// (sumf += sumi·(dx·dy)) must give other bits on some rows, or the test
// could not tell the two apart.
func TestAVX2LaneTypes(t *testing.T) {
	// the weight of element e of a block, as an integer (Q5_0: q-16)
	weight := map[ggml.Type]func(blk []byte, e int) int32{
		ggml.Q8_0: func(blk []byte, e int) int32 { return int32(int8(blk[2+e])) },
		ggml.Q5_0: func(blk []byte, e int) int32 {
			q := int32(blk[6+e%16]) >> (4 * (e / 16)) & 15
			qh := uint32(blk[2]) | uint32(blk[3])<<8 | uint32(blk[4])<<16 | uint32(blk[5])<<24
			return q | int32(qh>>e&1)<<4 - 16
		},
		ggml.Q4_1: func(blk []byte, e int) int32 { return int32(blk[4+e%16]) >> (4 * (e / 16)) & 15 },
	}
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q5_0, ggml.Q4_1} {
		r := rand.New(rand.NewPCG(41, 42))
		const rows, cols = 64, 32 * 24
		bb := formats[typ].bytes
		m := randomMatrix(r, typ, rows, cols)
		x := randVec(r, cols)
		got := make([]float32, rows)
		withPortable(func() { MatVec(got, m, x) })
		native := make([]float32, rows)
		MatVec(native, m, x)
		a := actsFree.get()
		a.prepare(formats[typ].vecType, x, cols, 1, false)
		av := a.view(0)
		generic := 0
		for i := 0; i < rows; i++ {
			row := m.Data[i*bb*(cols/32) : (i+1)*bb*(cols/32)]
			var lanes [8]float32
			var sumf, summs float32
			for b := 0; b < cols/32; b++ {
				blk := row[b*bb : (b+1)*bb]
				d := FP16ToFP32(uint16(blk[0])|uint16(blk[1])<<8) * av.d[b]
				if typ == ggml.Q4_1 {
					ms := FP16ToFP32(uint16(blk[2])|uint16(blk[3])<<8) * av.s[b]
					summs = float32(math.FMA(float64(FP16ToFP32(uint16(blk[2])|uint16(blk[3])<<8)), float64(av.s[b]), float64(summs)))
					sumf += ms
				}
				var total int32
				for l := 0; l < 8; l++ {
					var s int32
					for e := 4 * l; e < 4*l+4; e++ {
						s += weight[typ](blk, e) * int32(av.qs[b*32+e])
					}
					total += s
					lanes[l] = float32(math.FMA(float64(d), float64(s), float64(lanes[l])))
				}
				sumf += float32(total) * d
			}
			want := ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7])) + summs
			if math.Float32bits(got[i]) != math.Float32bits(want) || math.Float32bits(native[i]) != math.Float32bits(want) {
				t.Fatalf("%v row %d: portable %g, native %g, ggml's AVX2 order %g", typ, i, got[i], native[i], want)
			}
			if sumf != want {
				generic++
			}
		}
		actsFree.put(a)
		if generic == 0 {
			t.Fatalf("%v: the generic order gave the AVX2 order's bits on all %d rows: the test cannot tell them apart", typ, rows)
		}
		t.Logf("%v: %d of %d rows differ between the generic and the AVX2 order", typ, generic, rows)
	}
}

// TestQ4KFollowsRepackedGemv: Q4_K products round as ggml-cpu's x86
// ggml_gemv_q4_K_8x8_q8_K, the kernel llama.cpp's references ran for Q4_K
// weights repacked in groups of 8 rows: per super-block the exact integer
// of the scaled quants against the activations and the exact integer of
// the mins against the activations' 32-element sums, each added to its
// own float accumulator with one FMA (times dy·dx and dy·dmin), the row
// the first minus the second; written out here from that description,
// for the portable kernel, the row tiles and the packed groups. Rows of
// several super-blocks must give other bits than adding each super-block's
// (dy·dx)·S − (dy·dmin)·M on some rows, or the test could not tell the two
// apart.
func TestQ4KFollowsRepackedGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const rows, cols = 64, 256 * 3
	m := randomMatrix(r, ggml.Q4_K, rows, cols)
	x := randVec(r, cols)
	portable := make([]float32, rows)
	withPortable(func() { MatVec(portable, m, x) })
	native := make([]float32, rows)
	MatVec(native, m, x)
	free, _ := Pack([]Matrix{m})
	packed := make([]float32, rows)
	MatVec(packed, m, x)
	free()
	a := actsFree.get()
	defer actsFree.put(a)
	a.prepare(ggml.Q8_K, x, cols, 1, false)
	av := a.view(0)
	fma := func(p, q, acc float32) float32 { return float32(math.FMA(float64(p), float64(q), float64(acc))) }
	perBlock := 0
	for i := 0; i < rows; i++ {
		row := m.Data[i*144*(cols/256) : (i+1)*144*(cols/256)]
		var accS, accM, sumf float32
		for b := 0; b < cols/256; b++ {
			blk := row[b*144 : (b+1)*144]
			sc, mn := k4Scales((*[12]byte)(blk[4:16]))
			var s, mins int32
			for e := 0; e < 256; e++ {
				c, hi := e/64, e%64 >= 32
				q := int32(blk[16+32*c+e%32] & 15)
				if hi {
					q = int32(blk[16+32*c+e%32] >> 4)
				}
				s += int32(sc[e/32]) * q * int32(av.qs[b*256+e])
				mins += int32(mn[e/32]) * int32(av.qs[b*256+e])
			}
			dd := FP16ToFP32(uint16(blk[0])|uint16(blk[1])<<8) * av.d[b]
			dm := FP16ToFP32(uint16(blk[2])|uint16(blk[3])<<8) * av.d[b]
			accS, accM = fma(dd, float32(s), accS), fma(dm, float32(mins), accM)
			sumf += float32(dd*float32(s)) - float32(dm*float32(mins))
		}
		want := accS - accM
		for _, got := range []struct {
			name string
			v    float32
		}{{"portable", portable[i]}, {"row tiles", native[i]}, {"packed", packed[i]}} {
			if math.Float32bits(got.v) != math.Float32bits(want) {
				t.Fatalf("row %d: %s %g, ggml's repacked gemv order %g", i, got.name, got.v, want)
			}
		}
		if sumf != want {
			perBlock++
		}
	}
	if perBlock == 0 {
		t.Fatalf("per-super-block sums gave the gemv order's bits on all %d rows: the test cannot tell them apart", rows)
	}
	t.Logf("%d of %d rows differ between per-super-block sums and the repacked gemv order", perBlock, rows)
}

// TestQ4KLanesFollowsVecDot: a Matrix.VecDot Q4_K product rounds as
// ggml-cpu's x86 AVX2 ggml_vec_dot_q4_K_q8_K: per super-block, each of
// eight lanes (the elements whose position within their 32 is
// 4t..4t+3, summed scaled over the eight sub-blocks) FMA'd into its own
// float lane times dy·dx, the mins' integers per sub-block pair into four
// lanes times −dy·dmin; at the end hsum_float_8 of the first plus
// (m0+m2)+(m1+m3); written out here from that description, for the
// portable kernel, the row tiles and the packed groups, several vectors
// at once. It must part from the repacked gemv order (dotQ4K) on some
// rows.
func TestQ4KLanesFollowsVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const rows, cols, n = 24, 256 * 2, 5
	m := randomMatrix(r, ggml.Q4_K, rows, cols)
	m.VecDot = true
	x := randVec(r, n*cols)
	portable := make([]float32, n*rows)
	withPortable(func() { MatMul(portable, m, x, n) })
	native := make([]float32, n*rows)
	MatMul(native, m, x, n)
	free, _ := Pack([]Matrix{m})
	packed := make([]float32, n*rows)
	MatMul(packed, m, x, n)
	free()
	gemv := make([]float32, n*rows)
	plain := m
	plain.VecDot = false
	MatMul(gemv, plain, x, n)
	a := actsFree.get()
	defer actsFree.put(a)
	a.prepare(ggml.Q8_K, x, cols, n, false)
	fma := func(p, q, acc float32) float32 { return float32(math.FMA(float64(p), float64(q), float64(acc))) }
	differ := 0
	for v := 0; v < n; v++ {
		av := a.view(v)
		for i := 0; i < rows; i++ {
			row := m.Data[i*144*(cols/256) : (i+1)*144*(cols/256)]
			var acc [8]float32
			var accm [4]float32
			for b := 0; b < cols/256; b++ {
				blk := row[b*144 : (b+1)*144]
				sc, mn := k4Scales((*[12]byte)(blk[4:16]))
				var lanes [8]int32
				var mins [4]int32
				for e := 0; e < 256; e++ {
					c := e / 64
					q := int32(blk[16+32*c+e%32] & 15)
					if e%64 >= 32 {
						q = int32(blk[16+32*c+e%32] >> 4)
					}
					y := int32(av.qs[b*256+e])
					lanes[e%32/4] += int32(sc[e/32]) * q * y
					mins[e/64] += int32(mn[e/32]) * y
				}
				dd := av.d[b] * FP16ToFP32(uint16(blk[0])|uint16(blk[1])<<8)
				dm := -av.d[b] * FP16ToFP32(uint16(blk[2])|uint16(blk[3])<<8)
				for l := range acc {
					acc[l] = fma(dd, float32(lanes[l]), acc[l])
				}
				for p := range accm {
					accm[p] = fma(dm, float32(mins[p]), accm[p])
				}
			}
			want := ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7])) + ((accm[0] + accm[2]) + (accm[1] + accm[3]))
			k := v*rows + i
			for _, got := range []struct {
				name string
				v    float32
			}{{"portable", portable[k]}, {"row tiles", native[k]}, {"packed", packed[k]}} {
				if math.Float32bits(got.v) != math.Float32bits(want) {
					t.Fatalf("vector %d row %d: %s %g, ggml's AVX2 vec_dot order %g", v, i, got.name, got.v, want)
				}
			}
			if gemv[k] != want {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatalf("the repacked gemv order gave the vec_dot order's bits on all %d products: the test cannot tell them apart", n*rows)
	}
	t.Logf("%d of %d products differ between the repacked gemv and the AVX2 vec_dot order", differ, n*rows)
}
