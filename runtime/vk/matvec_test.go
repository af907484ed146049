package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

type mvCase struct {
	typ        ggml.Type
	rows, cols int
	ntok, nt   int // nt 0: chosen by type as the backend does
	norm       bool
	epi        int
	pair       bool   // y = act(W·x)·(W2·x)
	gelu       bool   // act is llama.cpp's F16 GELU-tanh, not SiLU (matvec.comp's ACT)
	partBytes  uint64 // split the matrix into parts of at most this size
	f32x       bool   // f32 activations (the kernel's ACTQ off)
	kernel     string // when set, every dispatch must run a kernel of this name (matvec_sg_q4_0: matvec_sg_)
	rbias      bool   // bias rows added before the activation and epilogue (BIAS; with pair, both products')
	oai        bool   // the pair's activation is gpt-oss's clamped SwiGLU (ACT 2)
	gemm       bool   // with a scratch for rounded x: the tiled product (matmul.go) for ntok > 1
}

// refSwigluOAI is ggml's swiglu_oai with gpt-oss's constants, as the CPU
// backend computes it.
func refSwigluOAI(g, u float32) float32 {
	x := min(g, 7)
	y := min(max(u, -7), 7)
	return x / (1 + float32(math.Exp(float64(1.702*-x)))) * (y + 1)
}

// runMatvec runs one mat-vec case on the device and on the reference
// (quant.DotRow, and a plain loop for the norm and epilogue), returning the
// NMSE and whether any sentinel outside the outputs was overwritten.
func runMatvec(t *testing.T, d *gpu, c mvCase, rng *rand.Rand) (float64, int) {
	t.Helper()
	w := randomWeights(t, c.typ, c.rows, c.cols, rng)
	saved := d.partBytes
	if c.partBytes > 0 {
		d.partBytes = c.partBytes
	}
	defer func() { d.partBytes = saved }()
	m, err := d.uploadMatrix("w", c.typ, c.rows, c.cols, w)
	if err != nil {
		t.Fatal(err)
	}
	if c.partBytes > 0 && len(m.parts) < 2 {
		t.Fatalf("matrix of %d bytes not split at %d bytes per part", m.Bytes, c.partBytes)
	}
	var w2 []byte
	var m2 *Matrix
	if c.pair {
		w2 = randomWeights(t, c.typ, c.rows, c.cols, rng)
		if m2, err = d.uploadMatrix("w2", c.typ, c.rows, c.cols, w2); err != nil {
			t.Fatal(err)
		}
	}
	l := layouts[c.typ]
	xstride := l.unitsPerRow(c.cols) * l.unit
	x := make([]float32, c.ntok*xstride)
	for tk := 0; tk < c.ntok; tk++ {
		copy(x[tk*xstride:], randomVec(c.cols, rng))
	}
	xb, _ := d.NewBuffer("x", uint64(4*len(x)), vulkan.MemDevice)
	xb.Write(0, f32bytes(x))
	var nwb *vulkan.Buffer
	nw := randomVec(xstride, rng)
	for i := c.cols; i < xstride; i++ {
		nw[i] = 0
	}
	if c.norm {
		nwb, _ = d.NewBuffer("nw", uint64(4*len(nw)), vulkan.MemDevice)
		nwb.Write(0, f32bytes(nw))
	}
	bias := randomVec(c.rows, rng)
	biasb, _ := d.NewBuffer("bias", uint64(4*len(bias)), vulkan.MemDevice)
	biasb.Write(0, f32bytes(bias))
	bias2 := randomVec(c.rows, rng)
	bias2b, _ := d.NewBuffer("bias2", uint64(4*len(bias2)), vulkan.MemDevice)
	bias2b.Write(0, f32bytes(bias2))
	// y has a sentinel-filled gap of 5 before and after each token's rows
	ystride := c.rows + 10
	y0 := randomVec(c.ntok*ystride, rng)
	for tk := 0; tk < c.ntok; tk++ {
		for i := 0; i < 5; i++ {
			y0[tk*ystride+i] = sentinel
			y0[tk*ystride+5+c.rows+i] = sentinel
		}
	}
	yb, _ := d.NewBuffer("y", uint64(4*len(y0)+64), vulkan.MemDevice)
	yb.Write(0, f32bytes(y0))
	step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
	binary.LittleEndian.PutUint32(step.Mapped(), uint32(c.ntok))

	rec, err := d.NewRecorder(16) // timestamps: Recorded lists the kernels c.kernel checks
	if err != nil {
		t.Fatal(err)
	}
	rec.Begin()
	y2b, _ := d.NewBuffer("y2", uint64(4*len(y0)+64), vulkan.MemDevice)
	op := matvecOp{label: "test", m: m, m2: m2, x: xb, xstride: xstride, norm: nwb, eps: 1e-5, bias: biasb, y: yb, y2: y2b, ystride: ystride, yoff: 5, epi: c.epi, tokens: c.ntok, nt: c.nt, step: step, f32x: c.f32x, act: flag(c.gelu)}
	if c.oai {
		op.act = 2
	}
	if c.gemm {
		op.xq, _ = d.NewBuffer("xq", uint64(4*c.ntok*xqBound(xstride)), vulkan.MemDevice)
	}
	if c.rbias {
		op.bias, op.rbias = nil, biasb
		if c.pair {
			op.rbias2 = bias2b
		}
	}
	record := d.matvec
	if c.gemm && c.ntok > 1 {
		record = d.matmul // whatever the layout and weight type would pick
	}
	if err := record(rec, op); err != nil {
		t.Fatal(err)
	}
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	if c.kernel != "" && len(rec.Recorded()) == 0 {
		t.Fatal("the recorder listed no dispatches to check the kernel of")
	}
	for _, dm := range rec.Recorded() {
		if strings.HasSuffix(dm.Label, "'s vec_dot_type)") {
			continue // the tiled product's rounding of x (its phase 0), the same for either form
		}
		if c.kernel != "" && dm.Kernel != c.kernel+strings.ToLower(c.typ.String()) {
			t.Errorf("dispatch %q ran %s, want %s%s", dm.Label, dm.Kernel, c.kernel, strings.ToLower(c.typ.String()))
		}
	}
	out := make([]byte, 4*len(y0))
	yb.Read(0, out)
	got := bytesF32(out)

	rowBytes, _ := c.typ.RowBytes(uint64(c.cols))
	var ref, res []float32
	bad := 0
	for tk := 0; tk < c.ntok; tk++ {
		xt := x[tk*xstride : tk*xstride+c.cols]
		if c.norm {
			var ss float64
			for _, v := range xt {
				ss += float64(v) * float64(v)
			}
			s := float32(1 / (sqrt(ss/float64(c.cols) + 1e-5)))
			xn := make([]float32, c.cols)
			for i := range xn {
				xn[i] = xt[i] * s * nw[i]
			}
			xt = xn
		}
		// The reference: quant.MatVec rounds x to the weight type's
		// vec_dot_type as llama.cpp does (and the kernel by default);
		// quant.DotRow keeps x in f32.
		wv, uv := make([]float32, c.rows), make([]float32, c.rows)
		if c.f32x {
			for r := range wv {
				wv[r] = quant.DotRow(c.typ, w[uint64(r)*rowBytes:uint64(r+1)*rowBytes], xt)
				if c.pair {
					uv[r] = quant.DotRow(c.typ, w2[uint64(r)*rowBytes:uint64(r+1)*rowBytes], xt)
				}
			}
		} else {
			quant.MatVec(wv, quant.Matrix{Type: c.typ, Rows: c.rows, Cols: c.cols, Data: w}, xt)
			if c.pair {
				quant.MatVec(uv, quant.Matrix{Type: c.typ, Rows: c.rows, Cols: c.cols, Data: w2}, xt)
			}
		}
		act := func(g float32) float32 {
			if c.gelu {
				return refGELU(g)
			}
			return float32(float64(g) / (1 + math.Exp(-float64(g))))
		}
		glu := func(g, u float32) float32 {
			if c.oai {
				return refSwigluOAI(g, u)
			}
			return act(g) * u
		}
		for r := 0; r < c.rows; r++ {
			v := wv[r]
			if c.rbias {
				v += bias[r]
				uv[r] += bias2[r]
			}
			if c.pair {
				v = glu(v, uv[r])
			}
			switch c.epi {
			case epiResidual:
				v += y0[tk*ystride+5+r]
			case epiBias:
				v += bias[r]
			case epiSwiGLU:
				v = glu(y0[tk*ystride+5+r], v)
			}
			ref = append(ref, v)
			res = append(res, got[tk*ystride+5+r])
		}
		for i := 0; i < 5; i++ {
			if !isSentinel(got[tk*ystride+i]) || !isSentinel(got[tk*ystride+5+c.rows+i]) {
				bad++
			}
		}
	}
	return nmse(ref, res), bad
}

// Error bounds. With x rounded to the vec_dot_type on both sides the kernel
// and quant.MatVec differ by float summation order, except where a one-ulp
// difference in the RMSNorm moves an 8-bit activation by a step: measured
// NMSE 4e-15..2e-13, one case 9.7e-8. With f32 x against quant.DotRow
// (float dequantization) the bound is test-backend-ops' usual 5e-4.
const (
	matvecNMSE    = 1e-6
	matvecF32NMSE = 5e-4
)

func checkMatvec(t *testing.T, d *gpu, c mvCase, rng *rand.Rand) {
	t.Helper()
	bound := matvecNMSE
	if c.f32x {
		bound = matvecF32NMSE
	}
	e, bad := runMatvec(t, d, c, rng)
	if e > bound || bad > 0 {
		t.Errorf("NMSE %.3g (bound %.0e), %d sentinels overwritten", e, bound, bad)
	} else {
		t.Logf("NMSE %.3g", e)
	}
}

// TestMatvecTypes checks every weight type against quant.DotRow: one token
// (decode), a batch that is not a multiple of the tokens per pass with the
// residual epilogue (prefill), and the RMSNorm prologue with a bias; row
// counts are not multiples of the workgroup's rows.
func TestMatvecTypes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(1))
	for _, typ := range allTypes {
		for _, c := range []mvCase{
			{typ: typ, rows: 37, cols: 768, ntok: 1},
			{typ: typ, rows: 53, cols: 512, ntok: 11, epi: epiResidual},
			{typ: typ, rows: 19, cols: 256, ntok: 3, nt: 1, norm: true, epi: epiBias},
		} {
			t.Run(fmt.Sprintf("%s/%dx%d/tok%d/norm%v/epi%d", typ, c.rows, c.cols, c.ntok, c.norm, c.epi), func(t *testing.T) {
				checkMatvec(t, d, c, rng)
			})
		}
	}
}

// gpuRegisters is the GPU layout with the register mat-vec, which it falls
// back on where x does not fit in shared memory.
var gpuRegisters = func() tuning { t := gpuTuning; t.sharedX = false; return t }()

// TestMatvecSplitK runs shapes whose K the plan splits into chunks (the
// norm then needs the whole row, gate/up go unpaired and up sums through a
// scratch buffer) under both the CPU and the GPU layouts (the latter with
// the register kernel, its fallback for rows too long for shared memory),
// and checks that they really are split.
func TestMatvecSplitK(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(3))
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuRegisters}} {
		for _, c := range []mvCase{
			{typ: ggml.Q4_0, rows: 29, cols: 2048, ntok: 9, norm: true, pair: true},
			{typ: ggml.Q4_K, rows: 21, cols: 8192, ntok: 5, epi: epiBias},
			{typ: ggml.Q8_0, rows: 13, cols: 4096, ntok: 2, epi: epiSwiGLU},
			{typ: ggml.Q4_0, rows: 17, cols: 11264, ntok: 1, norm: true, epi: epiResidual},
		} {
			t.Run(fmt.Sprintf("%s/%s/%dx%d/tok%d/norm%v/pair%v/epi%d", tu.name, c.typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi), func(t *testing.T) {
				withTuning(t, d, tu.t)
				units := c.cols / int(c.typ.BlockElems())
				if pl := d.plan(c.typ, units, c.ntok, c.pair); pl.chunks < 2 {
					t.Fatalf("plan %+v does not split K", pl)
				}
				checkMatvec(t, d, c, rng)
			})
		}
	}
}

// shapeCases are the shapes both mat-vec kernels must handle alike: float
// rows that are not whole units, matrices split into parts, and x kept in
// f32 (ACTQ 0) against float dequantization.
var shapeCases = []mvCase{
	{typ: ggml.F32, rows: 33, cols: 172, ntok: 1, norm: true},
	{typ: ggml.F16, rows: 47, cols: 172, ntok: 10, epi: epiResidual},
	{typ: ggml.Q5_1, rows: 100, cols: 256, ntok: 1, partBytes: 3000},
	{typ: ggml.Q6_K, rows: 40, cols: 512, ntok: 3, partBytes: 4000, epi: epiBias},
	{typ: ggml.Q4_0, rows: 31, cols: 512, ntok: 1, norm: true, f32x: true},
	{typ: ggml.Q4_1, rows: 31, cols: 512, ntok: 3, f32x: true},
	{typ: ggml.Q4_K, rows: 31, cols: 512, ntok: 1, norm: true, f32x: true},
	{typ: ggml.F16, rows: 31, cols: 512, ntok: 2, f32x: true},
}

// TestMatvecShapes covers the paths a few types suffice for: K split over
// dispatches (with the norm needing the whole row and gate/up unpaired),
// float rows that are not whole units, matrices split into parts, and the
// kernel with x kept in f32 (ACTQ 0) against float dequantization.
func TestMatvecShapes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(2))
	for _, c := range append([]mvCase{
		{typ: ggml.Q4_0, rows: 29, cols: 768, ntok: 1, norm: true, pair: true},
		{typ: ggml.Q4_0, rows: 29, cols: 2048, ntok: 9, norm: true, pair: true},
		{typ: ggml.Q4_K, rows: 21, cols: 4096, ntok: 5, epi: epiBias},
		{typ: ggml.Q8_0, rows: 13, cols: 4096, ntok: 2, epi: epiSwiGLU},
	}, shapeCases...) {
		t.Run(fmt.Sprintf("%s/%dx%d/tok%d/norm%v/pair%v/epi%d/parts%d/f32x%v", c.typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi, c.partBytes, c.f32x), func(t *testing.T) {
			checkMatvec(t, d, c, rng)
		})
	}
}

// TestMatvecShared checks the GPU layout's shared-x kernel (matvec_sg.comp)
// for every weight type against the same references and bounds as the
// register kernel: rows not a multiple of the workgroup's, K not a multiple
// of the lanes per row, decode and prefill (a batch that is not a multiple
// of the tokens per pass), the norm, gate/up pairs with SiLU and GELU, and
// every epilogue.
func TestMatvecShared(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, gpuTuning)
	rng := rand.New(rand.NewSource(4))
	for _, typ := range allTypes {
		unit := layouts[typ].unit
		k := 13 * unit // 13 units: no lanes-per-row divides it
		if unit > 32 {
			k = 3 * unit
		}
		for _, c := range []mvCase{
			{typ: typ, rows: 37, cols: k, ntok: 1},
			{typ: typ, rows: 53, cols: k, ntok: 11, epi: epiResidual},
			{typ: typ, rows: 19, cols: k, ntok: 3, nt: 2, norm: true, epi: epiBias},
			{typ: typ, rows: 29, cols: k, ntok: 1, norm: true, pair: true},
			{typ: typ, rows: 23, cols: k, ntok: 5, norm: true, pair: true, gelu: true},
			{typ: typ, rows: 13, cols: k, ntok: 2, epi: epiSwiGLU},
		} {
			c.kernel = "matvec_sg_"
			t.Run(fmt.Sprintf("%s/%dx%d/tok%d/nt%d/norm%v/pair%v/gelu%v/epi%d", typ, c.rows, c.cols, c.ntok, c.nt, c.norm, c.pair, c.gelu, c.epi), func(t *testing.T) {
				checkMatvec(t, d, c, rng)
			})
		}
	}
}

// TestMatvecSharedShapes covers what a few types suffice for under the
// shared-x kernel: rows far longer than a subgroup's stride (the 1B FFN's
// down projection, which the register kernel splits into 3 dispatches),
// float rows that are not whole units, matrices split into parts, x kept
// in f32 (ACTQ 0), and the choice of tokens per pass and the fallback to
// the register kernel when shared memory is small.
func TestMatvecSharedShapes(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, gpuTuning)
	rng := rand.New(rand.NewSource(5))
	for _, c := range append([]mvCase{
		{typ: ggml.Q4_0, rows: 31, cols: 5632, ntok: 1, norm: true, epi: epiResidual},
		{typ: ggml.Q4_K, rows: 17, cols: 5632, ntok: 9, norm: true, pair: true},
		{typ: ggml.Q6_K, rows: 21, cols: 4096, ntok: 2, epi: epiBias},
	}, shapeCases...) {
		c.kernel = "matvec_sg_"
		t.Run(fmt.Sprintf("%s/%dx%d/tok%d/norm%v/pair%v/epi%d/parts%d/f32x%v", c.typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi, c.partBytes, c.f32x), func(t *testing.T) {
			checkMatvec(t, d, c, rng)
		})
	}

	// x sized against maxComputeSharedMemorySize: fewer tokens per pass
	// when a prefill's eight do not fit, the register kernel (K split)
	// when not even one does.
	limit := func(t *testing.T, bytes uint32) {
		old := d.Info.Limits.MaxSharedMemory
		d.Info.Limits.MaxSharedMemory = bytes
		t.Cleanup(func() { d.Info.Limits.MaxSharedMemory = old })
	}
	t.Run("fewer tokens per pass", func(t *testing.T) {
		limit(t, 12<<10)
		c := mvCase{typ: ggml.Q4_0, rows: 27, cols: 2048, ntok: 9, norm: true, pair: true, kernel: "matvec_sg_"}
		sp, ok := d.planShared(c.typ, c.cols/32, c.ntok, 0, false)
		if !ok || sp.nt != 4 {
			t.Fatalf("2048-wide Q4_0 with 12 KiB of shared memory: plan %+v (fits %v), want 4 tokens per pass", sp, ok)
		}
		checkMatvec(t, d, c, rng)
	})
	t.Run("fallback", func(t *testing.T) {
		limit(t, 2<<10)
		c := mvCase{typ: ggml.Q4_0, rows: 27, cols: 2048, ntok: 1, norm: true, epi: epiResidual, kernel: "matvec_"}
		if sp, ok := d.planShared(c.typ, c.cols/32, c.ntok, 0, false); ok {
			t.Fatalf("2048-wide Q4_0 fits 2 KiB of shared memory: %+v", sp)
		}
		checkMatvec(t, d, c, rng)
	})
}

func TestSgGroups(t *testing.T) {
	for _, c := range []struct {
		rows, rpg, teams, max int
		groups, rpg1          int
	}{
		{2048, 8, 4, 65535, 256, 8},
		{37, 32, 16, 65535, 2, 32},
		{262144, 4, 2, 65535, 43691, 6},
		{262144, 4, 2, 0, 65536, 4},
		{100, 4, 2, 10, 10, 10},
	} {
		g, r := sgGroups(c.rows, c.rpg, c.teams, c.max)
		if g != c.groups || r != c.rpg1 || (c.max > 0 && g > c.max) || g*r < c.rows || r%c.teams != 0 {
			t.Errorf("sgGroups(%d, %d, %d, %d) = %d groups of %d rows, want %d of %d", c.rows, c.rpg, c.teams, c.max, g, r, c.groups, c.rpg1)
		}
	}
}

// TestPlanShared: the shared-x mat-vec's lanes per row follow the subgroup
// the pipeline will be created to require (else the size the device
// guarantees), capped by the row's units; prefill takes the most tokens per
// pass (up to 8) whose staged x fits maxComputeSharedMemorySize, and a row
// that does not fit even alone is refused (the register kernel then).
func TestPlanShared(t *testing.T) {
	const (
		stageCompute = 0x20 // VK_SHADER_STAGE_COMPUTE_BIT
		vendorAMD    = 0x1002
		vendorIntel  = 0x8086
	)
	dev := func(vendor, size, min, max, shared uint32) *gpu {
		f := vulkan.Features{SubgroupSize: size, MinSubgroupSize: min, MaxSubgroupSize: max}
		if min != max {
			f.SubgroupSizeControl, f.ComputeFullSubgroups, f.RequiredSubgroupStages = true, true, stageCompute
		}
		return &gpu{Device: &vulkan.Device{Info: vulkan.DeviceInfo{VendorID: vendor, SubgroupSize: size, Features: f, Limits: vulkan.Limits{MaxWorkGroupSize: 1024, MaxSharedMemory: shared}}}}
	}
	nvidia := dev(0x10de, 32, 32, 32, 48<<10)
	amd := dev(vendorAMD, 64, 32, 64, 64<<10)
	intelOld := dev(vendorIntel, 32, 32, 32, 64<<10) // no 1.3 range: 8 is what is sure
	lavapipe := dev(0x10005, 8, 8, 8, 32<<10)
	for _, c := range []struct {
		name        string
		d           *gpu
		typ         ggml.Type
		units, toks int
		lpr, nt     int
		ok          bool
	}{
		{"NVIDIA 1B QKV decode", nvidia, ggml.Q4_0, 64, 1, 32, 1, true},
		{"NVIDIA 1B down prefill", nvidia, ggml.Q4_0, 176, 64, 32, 4, true},
		{"NVIDIA 1B gate/up prefill", nvidia, ggml.Q4_0, 64, 64, 32, 8, true},
		{"NVIDIA Q4_K 2048 wide: 8 lanes per row", nvidia, ggml.Q4_K, 8, 1, 8, 1, true},
		{"AMD wave64 required", amd, ggml.Q4_0, 176, 1, 64, 1, true},
		{"Intel without a range", intelOld, ggml.Q4_0, 64, 1, 8, 1, true},
		{"lavapipe 1B down prefill", lavapipe, ggml.Q4_0, 176, 64, 8, 4, true},
		{"F32 row of 8192 fits 48 KiB alone", nvidia, ggml.F32, 256, 64, 32, 1, true},
		{"F32 row of 16384 does not", nvidia, ggml.F32, 512, 1, 0, 0, false},
	} {
		pl, ok := c.d.planShared(c.typ, c.units, c.toks, 0, false)
		if ok != c.ok || (ok && (pl.lpr != c.lpr || pl.nt != c.nt)) {
			t.Errorf("%s: plan %+v (fits %v), want %d lanes per row, %d tokens per pass (fits %v)", c.name, pl, ok, c.lpr, c.nt, c.ok)
			continue
		}
		if ok && 4*(pl.nt*pl.words+pl.nt*pl.teams) > int(c.d.Info.Limits.MaxSharedMemory) {
			t.Errorf("%s: %d tokens of %d words overflow %d bytes", c.name, pl.nt, pl.words, c.d.Info.Limits.MaxSharedMemory)
		}
	}
}

// TestMatvecBiasRows checks the mat-vec kernels' BIAS rows and gpt-oss's
// clamped SwiGLU (ACT 2) under both layouts: Wo's bias before the
// residual add, a paired gate/up with both biases before the activation
// (one pass, and with K split so gate and up run apart and up's partial
// sums meet its bias once), the activation with and without biases, and a
// matrix split into parts (the bias index is the part's row).
func TestMatvecBiasRows(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(43))
	for _, tu := range []struct {
		name string
		t    tuning
	}{{"cpu", cpuTuning}, {"gpu", gpuTuning}} {
		for _, c := range []mvCase{
			{typ: ggml.F32, rows: 45, cols: 256, ntok: 3, epi: epiResidual, rbias: true},
			{typ: ggml.Q8_0, rows: 37, cols: 512, ntok: 1, epi: epiResidual, rbias: true},
			{typ: ggml.F32, rows: 29, cols: 128, ntok: 2, norm: true, pair: true, rbias: true, oai: true},
			{typ: ggml.MXFP4, rows: 19, cols: 256, ntok: 3, norm: true, pair: true, rbias: true, oai: true},
			{typ: ggml.Q8_0, rows: 21, cols: 256, ntok: 9, norm: true, pair: true, oai: true},
			{typ: ggml.Q8_0, rows: 23, cols: 256, ntok: 2, epi: epiSwiGLU, rbias: true, oai: true},
			{typ: ggml.Q8_0, rows: 64, cols: 256, ntok: 2, rbias: true, partBytes: 4352},
			{typ: ggml.Q4_0, rows: 8, cols: 11264, ntok: 2, norm: true, pair: true, rbias: true, oai: true},
		} {
			if tu.name == "gpu" && c.cols > 4096 {
				continue // K is never split there
			}
			t.Run(fmt.Sprintf("%s/%s/%dx%d/tok%d/norm%v/pair%v/epi%d/bias%v/oai%v/parts%v", tu.name, c.typ, c.rows, c.cols, c.ntok, c.norm, c.pair, c.epi, c.rbias, c.oai, c.partBytes > 0), func(t *testing.T) {
				withTuning(t, d, tu.t)
				if c.cols > 4096 {
					units := c.cols / int(c.typ.BlockElems())
					if pl := d.plan(c.typ, units, c.ntok, c.pair); pl.chunks < 2 {
						t.Fatalf("plan %+v does not split K", pl)
					}
				}
				checkMatvec(t, d, c, rng)
			})
		}
	}
}

// TestF32MatvecOrders: an F32 mat-vec of a routed expert's rows, or of
// rows not a multiple of 8 long, gives the CPU backend's bits (quant.MatMul
// with RowByRow, or of such rows: ggml_vec_dot_f32's four 8-lane FMA
// accumulators, reduced, then the last k%32 products fused into the sum
// one at a time), and so does a dense one of rows a multiple of 8 long
// in an all-F32 model (tinyBLAS's one 8-lane accumulator, then hsum;
// Matrix.cpuOrder), for one token and
// batches, on the register kernel (the CPU device layout's; the GPU
// layout's shared-x kernel sums in its own order). Row [2^24, 1 × 31]
// against ones sums to 2^24+30 in the first order and 2^24+28 in
// tinyBLAS's (TestF32ProductOrders), and an FMA rounded as a product and a
// sum breaks the random rows' bits (llvmpipe's fma does).
func TestF32MatvecOrders(t *testing.T) {
	d := testDevice(t)
	withTuning(t, d, cpuTuning)
	rng := rand.New(rand.NewSource(41))
	known := make([]float32, 2*32)
	known[0], known[32] = 1<<24, 1<<24
	for i := range known {
		if i%32 != 0 {
			known[i] = 1
		}
	}
	for _, c := range []struct {
		rows, cols, ntok int
		byRow            bool
		w                []float32
	}{
		{2, 32, 1, true, known}, {2, 32, 3, true, known},
		{13, 8, 1, true, nil}, {13, 12, 2, false, nil}, {13, 40, 5, true, nil}, {13, 44, 3, false, nil},
		{13, 96, 9, true, nil}, {13, 172, 1, true, nil}, {70, 256, 9, true, nil}, {70, 256, 1, true, nil},
		// dense rows a multiple of 8 long: tinyBLAS's order (ORDER 2)
		{2, 32, 1, false, known}, {2, 32, 4, false, known},
		{13, 8, 1, false, nil}, {13, 40, 3, false, nil}, {13, 96, 9, false, nil}, {70, 256, 1, false, nil}, {70, 256, 9, false, nil},
	} {
		name := fmt.Sprintf("%dx%d/tokens%d/rowbyrow%v", c.rows, c.cols, c.ntok, c.byRow)
		w := c.w
		if w == nil {
			w = make([]float32, c.rows*c.cols)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
		}
		m, err := d.uploadMatrix("w", ggml.F32, c.rows, c.cols, f32bytes(w))
		if err != nil {
			t.Fatal(err)
		}
		m.cpuOrder = true // an all-F32 model's (weights.upload)
		xstride := m.Units * 32
		x := make([]float32, c.ntok*xstride)
		packed := make([]float32, c.ntok*c.cols)
		for tk := 0; tk < c.ntok; tk++ {
			for i := 0; i < c.cols; i++ {
				v := float32(rng.NormFloat64())
				if c.w != nil {
					v = 1
				}
				x[tk*xstride+i], packed[tk*c.cols+i] = v, v
			}
		}
		want := make([]float32, c.ntok*c.rows)
		quant.MatMul(want, quant.Matrix{Type: ggml.F32, Rows: c.rows, Cols: c.cols, Data: f32bytes(w), RowByRow: c.byRow}, packed, c.ntok)
		if c.w != nil {
			known := float32(1<<24 + 30) // ggml_vec_dot_f32's four accumulators
			if !c.byRow {
				known = 1<<24 + 28 // tinyBLAS's one: lane 0 drops each of its three ones
			}
			if want[0] != known {
				t.Fatalf("%s: the CPU reference sums to %.0f, want %.0f", name, want[0], known)
			}
		}
		xb, _ := d.NewBuffer("x", uint64(4*len(x)), vulkan.MemDevice)
		xb.Write(0, f32bytes(x))
		yb, _ := d.NewBuffer("y", uint64(4*c.ntok*c.rows), vulkan.MemDevice)
		step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
		binary.LittleEndian.PutUint32(step.Mapped(), uint32(c.ntok))
		rec, err := d.NewRecorder(0)
		if err != nil {
			t.Fatal(err)
		}
		rec.Begin()
		op := matvecOp{label: "test", m: m, x: xb, xstride: xstride, y: yb, ystride: c.rows, tokens: c.ntok, step: step, rowByRow: c.byRow}
		if err := d.matvec(rec, op); err != nil {
			t.Fatal(err)
		}
		if err := rec.End(); err != nil {
			t.Fatal(err)
		}
		if err := rec.Run(); err != nil {
			t.Fatal(err)
		}
		got := bytesF32(readBack(t, yb, c.ntok*c.rows))
		bad := 0
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				if bad < 3 {
					t.Errorf("%s: token %d row %d = %v, CPU %v", name, i/c.rows, i%c.rows, got[i], want[i])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d outputs differ from the CPU's bits", name, bad, len(want))
		}
	}
}
