package cpu

import (
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// Mamba2 layers (nemotron_h, granitehybrid; runtime/arch/mamba2.go) in
// llama.cpp's float order: mamba-base.cpp's build_mamba2_layer over
// ggml-cpu's ssm_conv and ssm_scan, which fold the batch into the state
// token by token, prefill as decode.

// mamba2Scratch is the Mamba2 layers' batch buffers and their vectors
// decoded once; nil for a model without them. Their states live with the
// other recurrent layers' (hybrid, state.go): the conv state is the last
// K−1 xBC inputs oldest first [(K−1) x channels], the scan state H·P
// rows of N ([head][p][n], ggml_ssm_scan's layout).
type mamba2Scratch struct {
	shape plan.Mamba2Shape
	proj  []float32 // ssm_in's output [n x InProj]: z | xBC | dt
	xbc   []float32 // the conv's output after bias and SiLU [n x channels]
	y     []float32 // the scan's output, then gated and normed [n x inner]
	ones  []float32 // [channels] of 1: siluAll's other operand
	// per layer (nil for the others); tapsT is taps tap-major ([K][C], the
	// native conv's layout)
	taps, tapsT, bias, dtBias, a, d, norm [][]float32

	// the heads' scan as the pool's range function, made once, and the
	// arguments of the call in progress
	headsFn func(lo, hi int)
	call    struct {
		ssm []float32
		l   int
		n   int
	}
}

func newMamba2Scratch(p *plan.Plan, n int) *mamba2Scratch {
	sh := p.Mamba2Shape
	if sh.Inner == 0 {
		return nil
	}
	l := len(p.Layers)
	s := &mamba2Scratch{shape: sh,
		proj: make([]float32, n*sh.InProj()), xbc: make([]float32, n*sh.ConvChannels()), y: make([]float32, n*sh.Inner),
		taps: make([][]float32, l), tapsT: make([][]float32, l), bias: make([][]float32, l), dtBias: make([][]float32, l),
		a: make([][]float32, l), d: make([][]float32, l), norm: make([][]float32, l)}
	s.headsFn = s.heads
	s.ones = make([]float32, sh.ConvChannels())
	for i := range s.ones {
		s.ones[i] = 1
	}
	return s
}

// tapMajor is a conv's taps ([C][K], channel by channel) stored tap by
// tap ([K][C]), so that the native conv reads each tap's channels in a row.
func tapMajor(taps []float32, K int) []float32 {
	C := len(taps) / K
	out := make([]float32, len(taps))
	for c := 0; c < C; c++ {
		for i := 0; i < K; i++ {
			out[i*C+c] = taps[c*K+i]
		}
	}
	return out
}

// nativeConv lets tests run causalConv's portable loop on a machine with
// native kernels.
var nativeConv = true

// convStep is causalConv, on the native kernel where there is one (the
// same bits, TestConvStepMatchesPortable): out from in and the state,
// then in joins the state.
func convStep(out, state, in, taps, tapsT []float32, K int) {
	if !nativeConv || !simd.CausalConv(out, state, in, tapsT, K) {
		causalConv(out, state, in, taps, K)
		return
	}
	C := len(in)
	copy(state, state[C:])
	copy(state[(K-2)*C:], in)
}

// siluAll sets x[i] = silu(x[i]) through swiglu against ones (len(x) of
// 1): silu(v)·1 is silu(v) exactly, so the native kernel's vectors give
// the scalar silu's bits (TestSiLUAllMatchesSiLU).
func siluAll(x, ones []float32) {
	swiglu(x, ones[:len(x)])
}

// bind decodes layer l's vectors once.
func (s *mamba2Scratch) bind(l int, w *plan.Mamba2Weights) {
	s.taps[l], s.bias[l] = optRows(&w.Conv), optVector(w.ConvBias)
	s.tapsT[l] = tapMajor(s.taps[l], s.shape.ConvKernel)
	s.dtBias[l], s.a[l], s.d[l], s.norm[l] = vectorF32(w.DtBias), optRows(&w.A), optRows(&w.D), optRows(&w.Norm)
}

func (s *mamba2Scratch) bytes() int64 {
	if s == nil {
		return 0
	}
	return 4 * int64(len(s.proj)+len(s.xbc)+len(s.y)+len(s.ones))
}

// mamba2 runs Mamba2 layer l over the n normed inputs in, leaving
// ssm_out·y in s.proj:
//
//	z, xBC, dt = split(ssm_in·u);  xBC = silu(conv(xBC) + bias)
//	per head: δ = softplus(dt + dt_bias);  S = e^(δ·A)·S + δ·x ⊗ B_g;  y = S·C_g + D·x
//	y = grouped_rms(y ⊙ silu(z))·ssm_norm
func (b *Backend) mamba2(l int, o *plan.Mamba2, in []float32, n int) {
	s := b.mamba
	sh := &s.shape
	P, C, inner := sh.InProj(), sh.ConvChannels(), sh.Inner
	quant.MatMul(s.proj[:n*P], mamba2Matrix(o.W.In), in, n)
	conv := b.hybrid.conv[l]
	for t := 0; t < n; t++ {
		row := s.proj[t*P : (t+1)*P]
		x := s.xbc[t*C : (t+1)*C]
		convStep(x, conv, row[inner:inner+C], s.taps[l], s.tapsT[l], sh.ConvKernel)
		if bias := s.bias[l]; bias != nil {
			addTo(x, bias)
		}
		siluAll(x, s.ones)
	}
	// each head's state sees only its own sequence: the heads run in
	// parallel, each over the batch's tokens in order
	s.call.ssm, s.call.l, s.call.n = b.hybrid.mat[l], l, n
	quant.ParallelRange(sh.Heads, 1, s.headsFn)
	// the gate, then the norm of each group's channels (Mamba2's
	// norm_before_gate = false)
	G := sh.Groups
	gw := inner / G
	for t := 0; t < n; t++ {
		// silu(z)·y into z (z is read nowhere else; the product's
		// operands commute, so these are y·silu(z)'s bits), normed into y
		y, z := s.y[t*inner:(t+1)*inner], s.proj[t*P:t*P+inner]
		swiglu(z, y)
		for g := 0; g < G; g++ {
			rmsNorm(y[g*gw:(g+1)*gw], z[g*gw:(g+1)*gw], s.norm[l][g*gw:(g+1)*gw], o.Eps)
		}
	}
	quant.MatMul(b.s.proj[:n*b.plan.Embd], mamba2Matrix(o.W.Out), s.y[:n*inner], n)
}

// mamba2Matrix is a Mamba2 projection as its products read it: Q4_K rows
// summed in ggml's AVX2 vec_dot lanes, as llama.cpp's CPU backend sums
// these where it sums other Q4_K weights in its repacked gemv's order
// (quant.Matrix.VecDot says what was measured).
func mamba2Matrix(w plan.Weight) quant.Matrix {
	m := matrix(w)
	m.VecDot = true
	return m
}

// heads scans heads [lo, hi) of the call's layer over its tokens.
func (s *mamba2Scratch) heads(lo, hi int) {
	sh := &s.shape
	l, n, ssm := s.call.l, s.call.n, s.call.ssm
	P, C, inner, N := sh.InProj(), sh.ConvChannels(), sh.Inner, sh.State
	hd := sh.HeadDim()
	perGroup := sh.Heads / sh.Groups
	for h := lo; h < hi; h++ {
		g := h / perGroup // consecutive heads share a group (repeat_interleave)
		st := ssm[h*hd*N : (h+1)*hd*N]
		for t := 0; t < n; t++ {
			xbc := s.xbc[t*C : (t+1)*C]
			x := xbc[h*hd : (h+1)*hd]
			B := xbc[inner+g*N : inner+(g+1)*N]
			Cg := xbc[inner+sh.Groups*N+g*N : inner+sh.Groups*N+(g+1)*N]
			dt := softplus1p(s.proj[t*P+inner+C+h] + s.dtBias[l][h])
			dA := float32(math.Exp(float64(dt * s.a[l][h])))
			y := s.y[t*inner+h*hd : t*inner+(h+1)*hd]
			if !simd.SSMScanHead(st, x, B, Cg, y, dA, dt) { // VKCHAT_CPU_KERNELS=portable: scanRow
				for p := 0; p < hd; p++ {
					y[p] = scanRow(st[p*N:(p+1)*N], B, Cg, dA, x[p]*dt)
				}
			}
			dskip := s.d[l][h]
			for p := range y {
				y[p] += float32(x[p] * dskip) // ggml_mul, then ggml_add
			}
		}
	}
}

// scanRow is one row of ggml_ssm_scan's Mamba-2 branch: state[i] ←
// state[i]·dA + B[i]·xdt, and the dot of the new state with C. The sum
// follows ggml-cpu's AVX2 build: the first N rounded down to 32 states in
// four accumulators of eight lanes (each update and product fused, as the
// vector FMA is), reduced as GGML_F32_VEC_REDUCE does, then the rest one
// by one. It is the oracle of runtime/simd's vk_ssm_scan_head, which runs
// it in vector registers (the decode step's innermost loop: H·P·N
// elements a layer and token).
func scanRow(state, B, C []float32, dA, xdt float32) float32 {
	N := len(state)
	B, C = B[:N], C[:N]
	np := N &^ 31
	var sum float32
	if np > 0 {
		var acc [4][8]float32
		for i := 0; i < np; i += 32 {
			for j := 0; j < 4; j++ {
				for k := 0; k < 8; k++ {
					q := i + 8*j + k
					v := fma32(state[q], dA, B[q]*xdt)
					acc[j][k] = fma32(v, C[q], acc[j][k])
					state[q] = v
				}
			}
		}
		var v, a [8]float32
		for k := range v {
			v[k] = (acc[0][k] + acc[2][k]) + (acc[1][k] + acc[3][k])
		}
		for k := 0; k < 4; k++ {
			a[k] = v[k] + v[k+4]
		}
		sum = (a[0] + a[1]) + (a[2] + a[3])
	}
	for q := np; q < N; q++ {
		v := fma32(state[q], dA, B[q]*xdt)
		sum = fma32(v, C[q], sum)
		state[q] = v
	}
	return sum
}

// softplus1p is ggml_softplus: log1p(e^x), the identity above 20.
func softplus1p(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(float64(float32(math.Exp(float64(x))))))
}
