package quant

import (
	"fmt"
	"runtime"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// Matrix is a 2-D weight: Rows rows of Cols elements each (GGUF dims
// [Cols, Rows]), Data in Type's block layout, row after row.
type Matrix struct {
	Type       ggml.Type
	Cols, Rows int
	Data       []byte
	// RowByRow marks a product llama.cpp computes one row·vector dot at
	// a time whatever the number of vectors (MUL_MAT_ID: a MoE's
	// experts). It matters to F32 weights: those sum in
	// ggml_vec_dot_f32's order (dotF32), the others in the order
	// llama.cpp's MUL_MAT gives a batch, tinyBLAS's (dotF32GEMM; rows of
	// a whole number of 8-lane steps, else it refuses them too). llama.cpp
	// takes vec_dot's order for a single vector too, but a product here
	// gives the same bits whatever the batch, so that a prompt read in
	// chunks, a speculative verification and a rewind match one pass:
	// prompt positions follow llama.cpp's bits, a decode step its order
	// to within rounding.
	RowByRow bool
	// VecDot marks a product whose Q4_K rows llama.cpp's x86 CPU backend
	// sums in its vec_dot kernel's eight AVX2 lanes (dotQ4KLanes), not in
	// the order of the repacked gemv (dotQ4K) it runs for other Q4_K
	// weights. Measured, not read from ggml: Mamba2's in and out
	// projections (which ggml's graph multiplies with 3-D activations)
	// match llama.cpp's synth-granitehybrid-Q4_K_M dump to 1e-6 at 32 of
	// its first 33 positions this way and part from it at position 1 with
	// either one alone in lanes; nemotron_h_moe matches at every position
	// either way. Other types are unaffected.
	VecDot bool
	// bound marks a Matrix made by Bind, which carries its packed copy
	// (packed, nil if it has none) so that products skip the registry:
	// a decode step makes a few hundred products, and each lookup there
	// (a lock and a map whose lines the step's weight stream has long
	// evicted) cost more than the small products' hand-offs.
	bound  bool
	packed *packedMatrix
}

// Bind returns m with its packed copy attached, as products would look it
// up now (none if it has none). A backend binds its matrices once, after
// Pack; a bound Matrix must not outlive that Pack's free (a product would
// still give the same bits, from a copy kept alive only by the Matrix).
func Bind(m Matrix) Matrix {
	m.bound, m.packed = true, lookupPacked(&m)
	return m
}

// Below this many multiply-adds a product runs on the calling goroutine:
// waking workers would cost more than it saves.
const inlineWork = 64 << 10

// ... and below this many bytes of weights: a float matrix as small in
// work as a MoE router (32x1024 F32, 128 KiB) is still a read from memory
// worth splitting (run inline it was a serial stretch of every MoE layer:
// docs/benchmarks.md, "2026-12-04 (later): less serial time in a CPU MoE
// decode step (issue 24)").
const inlineBytes = 64 << 10

// Each chunk handed to a goroutine is about this many multiply-adds, small
// enough to balance two cores on a 2048-row matrix and large enough that the
// atomic hand-out is noise.
const chunkWork = 16 << 10

// minChunkBytes is the least weight bytes a native chunk reads (see
// productsEach).
const minChunkBytes = 96 << 10

// A tile of input vectors is at most about this many bytes of converted
// activations, so that it stays in a core's L2 cache while every weight row
// passes by once per tile; without tiles a long prompt would stream all its
// activations from memory for every row.
const tileBytes = 128 << 10

// nativeTileBytes is the activation tile for the native kernels: their
// activations are smaller, and a tile below their 8-vector register tile
// would fall back to one vector at a time (the 1B model's down projection,
// 5632 columns, got 7-vector tiles from tileBytes).
const nativeTileBytes = 512 << 10

// portableOnly turns the native kernels off for this process (tests compare
// the two paths with it; VKCHAT_CPU_KERNELS=portable does it for a run).
var portableOnly = false

func init() {
	for t, f := range formats {
		f.native = simd.Has(int(t))
	}
}

func (m *Matrix) check(op string) (*format, int) {
	f, err := formatOf(m.Type)
	if err != nil {
		panic(err)
	}
	rb, err := f.rowBytes(m.Type, m.Cols)
	if err != nil || m.Rows < 0 {
		panic(fmt.Sprintf("quant: %s: bad %v matrix %dx%d", op, m.Type, m.Rows, m.Cols))
	}
	if len(m.Data) < rb*m.Rows {
		panic(fmt.Sprintf("quant: %s: %v matrix %dx%d needs %d bytes, has %d", op, m.Type, m.Rows, m.Cols, rb*m.Rows, len(m.Data)))
	}
	return f, rb
}

// MatVec sets dst[r] = row r · x for r in [0, Rows), the llama.cpp way: x
// (len Cols) is converted once to the weight type's vec_dot_type and each row
// is multiplied by ggml's generic vec_dot kernel (see the package comment).
// Rows are split over the shared worker pool. It panics on mismatched sizes.
func MatVec(dst []float32, m Matrix, x []float32) {
	if len(x) != m.Cols || len(dst) < m.Rows {
		panic(fmt.Sprintf("quant: MatVec: %dx%d matrix with len(x)=%d, len(dst)=%d", m.Rows, m.Cols, len(x), len(dst)))
	}
	product(dst, &m, x, 1, "MatVec")
}

// MatMul multiplies n input vectors x (token-major, n×Cols) into dst
// (token-major, n×Rows): dst[v*Rows+r] = row r · x[v*Cols:(v+1)*Cols], each
// bit-identical to what MatVec computes. Vectors are converted once; each
// weight row is then applied to a tile of vectors (as many as fit in L2, all
// n for short batches) while the row is in L1, so weights are read once per
// tile rather than once per vector. Rows are split over the worker pool.
func MatMul(dst []float32, m Matrix, x []float32, n int) {
	if n < 0 || len(x) != n*m.Cols || len(dst) < n*m.Rows {
		panic(fmt.Sprintf("quant: MatMul: %dx%d matrix, n=%d with len(x)=%d, len(dst)=%d", m.Rows, m.Cols, n, len(x), len(dst)))
	}
	product(dst, &m, x, n, "MatMul")
}

// MatMuls runs MatMul(dsts[i], ms[i], x, n) for every i. Matrices that
// take the same activations (same columns and vec_dot_type: a layer's Q, K
// and V, or gate and up) share one conversion of x and one job on the
// pool, so the workers are handed out once for all of them. Each result
// is bit-identical to MatMul's.
func MatMuls(dsts [][]float32, ms []Matrix, x []float32, n int) {
	if len(dsts) != len(ms) {
		panic(fmt.Sprintf("quant: MatMuls: %d destinations for %d matrices", len(dsts), len(ms)))
	}
	var group [maxParts]*Matrix
	var gdst [maxParts][]float32
	for i, m := range ms {
		if n < 0 || len(x) != n*m.Cols || len(dsts[i]) < n*m.Rows {
			panic(fmt.Sprintf("quant: MatMuls: %dx%d matrix, n=%d with len(x)=%d, len(dst)=%d", m.Rows, m.Cols, n, len(x), len(dsts[i])))
		}
	}
	for i := 0; i < len(ms); {
		m := &ms[i]
		f, _ := m.check("MatMuls")
		k := 0
		for ; i < len(ms) && k < maxParts; i, k = i+1, k+1 {
			g, _ := ms[i].check("MatMuls")
			if k > 0 && (ms[i].Cols != m.Cols || g.vecType != f.vecType || g.native != f.native) {
				break
			}
			group[k], gdst[k] = &ms[i], dsts[i]
		}
		products(gdst[:k], group[:k], x, n, "MatMuls")
	}
}

// MatMulsEach runs MatMul(dsts[i], ms[i], xs[i], n) for every i: products
// that each take their own activations (a token's experts' down
// projections) but share columns and vec_dot_type run as one job, so the
// workers are handed out once for all of them. Each result is
// bit-identical to MatMul's.
func MatMulsEach(dsts [][]float32, ms []Matrix, xs [][]float32, n int) {
	if len(dsts) != len(ms) || len(xs) != len(ms) {
		panic(fmt.Sprintf("quant: MatMulsEach: %d destinations and %d inputs for %d matrices", len(dsts), len(xs), len(ms)))
	}
	var group [maxParts]*Matrix
	var gdst, gx [maxParts][]float32
	for i, m := range ms {
		if n < 0 || len(xs[i]) != n*m.Cols || len(dsts[i]) < n*m.Rows {
			panic(fmt.Sprintf("quant: MatMulsEach: %dx%d matrix, n=%d with len(x)=%d, len(dst)=%d", m.Rows, m.Cols, n, len(xs[i]), len(dsts[i])))
		}
	}
	for i := 0; i < len(ms); {
		m := &ms[i]
		f, _ := m.check("MatMulsEach")
		k := 0
		for ; i < len(ms) && k < maxParts; i, k = i+1, k+1 {
			g, _ := ms[i].check("MatMulsEach")
			if k > 0 && (ms[i].Cols != m.Cols || g.vecType != f.vecType || g.native != f.native) {
				break
			}
			group[k], gdst[k], gx[k] = &ms[i], dsts[i], xs[i]
		}
		productsEach(gdst[:k], group[:k], gx[:k], n, "MatMulsEach")
	}
}

func product(dst []float32, m *Matrix, x []float32, n int, op string) {
	products([][]float32{dst}, []*Matrix{m}, x, n, op)
}

// products computes ms[i]·x into dsts[i] for matrices of the same columns
// and vec_dot_type (at most maxParts), as one job.
func products(dsts [][]float32, ms []*Matrix, x []float32, n int, op string) {
	productsEach(dsts, ms, [][]float32{x}, n, op)
}

// productsEach is products with activations per matrix (xs[i]), or one
// shared by all (len(xs) == 1), each converted once.
func productsEach(dsts [][]float32, ms []*Matrix, xs [][]float32, n int, op string) {
	f, _ := ms[0].check(op)
	cols := ms[0].Cols
	native := f.native && !portableOnly
	var as [maxParts]*acts
	for i, x := range xs {
		a := actsFree.get()
		a.prepare(f.vecType, x, cols, n, native)
		a.views = grow(a.views, n)
		if !native {
			for v := range a.views {
				a.views[v] = a.view(v)
			}
		}
		as[i] = a
	}
	a := as[0]
	j := jobs.get()
	j.views, j.native, j.acts = a.views, native, &a.native
	j.vtile = max(1, min(n, tileBytes/max(1, a.bytesPerVector())))
	if native {
		// The native kernels read only the int8 quants and per-block
		// scale and sum (1.25 bytes per element), and tile 8 vectors at a
		// time: tiles of a multiple of 8 that fit half of a 1 MiB L2.
		perVec := cols + cols/4
		j.vtile = max(1, min(n, nativeTileBytes/max(1, perVec)))
		if j.vtile > 8 && j.vtile < n {
			j.vtile &^= 7
		}
	}
	// More goroutines than Ps cannot run at once; they would only add
	// hand-offs.
	threads := min(int(pool.threads.Load()), runtime.GOMAXPROCS(0))
	work, bytes := 0, 0
	for _, m := range ms {
		work += m.Cols * n * m.Rows
		bytes += len(m.Data)
	}
	if work < inlineWork && bytes < inlineBytes {
		threads = 1
	}
	j.nparts = 0
	for i, m := range ms {
		if m.Rows == 0 || n == 0 {
			continue
		}
		mf, rb := m.check(op)
		p := &j.parts[j.nparts]
		j.nparts++
		p.f, p.data, p.rowBytes, p.rows, p.dst, p.typ = mf, m.Data, rb, m.Rows, dsts[i], int(m.Type)
		p.dot = mf.dot
		if m.Type == ggml.F32 && m.Cols%8 == 0 && !m.RowByRow {
			p.dot, p.typ = dotF32GEMM, simd.F32GEMM
		}
		if m.Type == ggml.Q4_K && m.VecDot {
			p.dot, p.typ = dotQ4KLanes, simd.Q4KLanes
		}
		p.packed = nil
		p.views, p.acts = nil, nil
		if len(xs) > 1 {
			p.views, p.acts = as[i].views, &as[i].native
		}
		if native {
			p.packed = m.packed
			if !m.bound {
				p.packed = lookupPacked(m)
			}
			if p.packed != nil && p.packed.own {
				p.data, p.packed = p.packed.data, nil
			}
			// Each chunk is one cgo call and a claim (docs/benchmarks.md,
			// "cpu: what a hand-off costs (cgo calls, wake-ups)"):
			// about eight chunks per thread and tile leave room to
			// balance the cores, and at least minChunkBytes of
			// weights keeps each a stream the prefetchers get going
			// on (a MoE expert's few hundred KiB would otherwise be
			// cut into 18 KiB pieces). Multiples of 8 rows keep the
			// kernels' row tiles and the packed groups whole.
			p.chunk = max(8, m.Rows/(8*threads), minChunkBytes/max(1, rb))
			p.chunk = min(p.chunk, (m.Rows+threads-1)/threads) // every goroutine a chunk
			p.chunk = (p.chunk + 7) &^ 7
		} else {
			p.chunk = max(1, chunkWork/max(1, m.Cols*j.vtile))
		}
	}
	// The activations go back to actsFree with the job (recycle), once
	// no goroutine holds it: a team helper may still be computing a
	// chunk the caller took over (team.go) after run returns.
	copy(j.owned[:], as[:len(xs)])
	j.nowned, j.ownedF32 = len(xs), f.vecType == ggml.F32
	if j.nparts > 0 {
		j.run(threads)
	} else {
		j.recycle()
	}
}

// compute does rows [lo, hi) for vectors [v0, v1). Each weight row is read
// once per call and applied to every vector while it is in L1.
func (j *job) compute(pt *part, lo, hi, v0, v1 int) { j.computeInto(pt, pt.dst, lo, hi, v0, v1) }

// computeInto is compute writing to out, laid out as the part's dst (a
// team helper's shadow of it: team.go).
func (j *job) computeInto(pt *part, out []float32, lo, hi, v0, v1 int) {
	if j.fn != nil {
		j.fn(lo, hi)
		return
	}
	views, acts := j.views, j.acts
	if pt.acts != nil { // activations of its own (MatMulsEach)
		views, acts = pt.views, pt.acts
	}
	if p := pt.packed; p != nil {
		// lo is a multiple of 8 (chunks are); the rows%8 tail is unpacked
		if end := min(hi, p.rows&^7); end > lo {
			var ok bool
			if p.il {
				ok = simd.MatMulInterleaved(pt.typ, p.data, p.groupBytes, lo, end, acts, v0, v1, out, pt.rows)
			} else {
				ok = simd.MatMulPacked(pt.typ, p.data, p.groupBytes, lo, end, acts, v0, v1, out, pt.rows)
			}
			if ok {
				lo = end
			}
		}
		if lo >= hi {
			return
		}
		// The rows past the groups, from the copy of them: rows are
		// counted from the first of them there, and so is dst.
		if base := p.rows &^ 7; p.tail != nil && lo >= base && j.native &&
			simd.MatMul(pt.typ, p.tail, pt.rowBytes, lo-base, hi-base, acts, v0, v1, out[base:], pt.rows) {
			return
		}
	}
	if j.native && simd.MatMul(pt.typ, pt.data, pt.rowBytes, lo, hi, acts, v0, v1, out, pt.rows) {
		return
	}
	dot, rb, rows, data, dstAll := pt.dot, pt.rowBytes, pt.rows, pt.data, out
	if v1-v0 == 1 {
		av := &views[v0]
		dst := dstAll[v0*rows+lo : v0*rows+hi]
		for r := range dst {
			dst[r] = dot(data[(lo+r)*rb:(lo+r+1)*rb], av)
		}
		return
	}
	for r := lo; r < hi; r++ {
		row := data[r*rb : (r+1)*rb]
		for v := v0; v < v1; v++ {
			dstAll[v*rows+r] = dot(row, &views[v])
		}
	}
}
