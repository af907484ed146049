package cpu

import (
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// rmsNorm writes x / rms(x) * w into out (out may be x); w nil skips the
// weight. It rounds as ggml_rms_norm_f32 does: each square in float32,
// their sum in float64, the mean rounded to float32, then 1.0f/sqrtf(mean
// + eps) in float32, x*scale, then *w. (The mean and scale kept in float64
// moved one rounding of the scale by an ulp often enough to put Gemma 4's
// F16 roundings of K, V and the GELU table index elsewhere: 1e-2 off
// llama.cpp's logits where this form matches them to the dump's digits.)
// The squares go to four running sums by index mod 4, added as
// (s0+s1)+(s2+s3), so that the native kernel (simd.RMSNorm, four float64
// lanes) adds in the same order: bit-identical; ggml's one running sum
// differs from it only in float64 rounding.
func rmsNorm(out, x, w []float32, eps float32) {
	if nativeNorm && simd.RMSNorm(out, x, w, eps) {
		return
	}
	var ss [4]float64
	for i, v := range x {
		ss[i%4] += float64(v * v)
	}
	sum := (ss[0] + ss[1]) + (ss[2] + ss[3])
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	if w == nil {
		for i := range x {
			out[i] = x[i] * scale
		}
		return
	}
	for i := range x {
		out[i] = x[i] * scale * w[i]
	}
}

// nativeNorm lets tests run rmsNorm's portable loops on a machine with
// native kernels.
var nativeNorm = true

// rmsNormRows normalizes each width-wide row of x in place.
func rmsNormRows(x []float32, width int, w []float32, eps float32) {
	if nativeNorm && simd.RMSNormRows(x, width, w, eps) {
		return
	}
	for o := 0; o+width <= len(x); o += width {
		rmsNorm(x[o:o+width], x[o:o+width], w, eps)
	}
}

func scaleAll(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// tanhf is C's tanhf to within an ulp: float64 tanh rounded once.
func tanhf(x float32) float32 { return float32(math.Tanh(float64(x))) }

// softcapShared is softcap with both cores sharing it: the final
// soft-cap runs over a vocabulary of logits per token (Gemma's 262,144),
// where one core's scalar tanh was a serial stretch of every decode step
// (docs/benchmarks.md, "2026-12-07: bench shapes of the new MoE families
// (issue 41, item 7)").
func softcapShared(x []float32, c float32) {
	quant.ParallelRange(len(x), 8192, func(lo, hi int) { softcap(x[lo:hi], c) })
}

// softcap is c·tanh(x/c) as ggml's graph computes it for the final logits:
// x·(1/c), tanh, ·c, each rounded to float32.
func softcap(x []float32, c float32) {
	inv := 1 / c
	for i, v := range x {
		x[i] = tanhf(v*inv) * c
	}
}

// vectorF32 reinterprets an F32 vector weight; nil for a weight that is
// absent.
func vectorF32(w plan.Weight) []float32 {
	if w.Data == nil {
		return nil
	}
	out := make([]float32, w.Cols)
	_ = quant.Dequantize(w.Type, w.Data, out)
	return out
}

// optVector is vectorF32 of an optional weight.
// optRows decodes an F32 matrix of per-row vectors (per-expert biases),
// rows after rows; nil for nil.
func optRows(w *plan.Weight) []float32 {
	if w == nil {
		return nil
	}
	out := make([]float32, w.Cols*w.Rows)
	_ = quant.Dequantize(w.Type, w.Data, out)
	return out
}

func optVector(w *plan.Weight) []float32 {
	if w == nil {
		return nil
	}
	return vectorF32(*w)
}

func matrix(w plan.Weight) quant.Matrix {
	return quant.Matrix{Type: w.Type, Cols: w.Cols, Rows: w.Rows, Data: w.Data}
}

// silu is x / (1 + e^-x), with e^-x rounded to float32 from a float64
// value, as the C library's expf is within rounding of it (llama.cpp's
// scalar ggml_silu_f32). Its vector expf (ggml_v_expf, within 2 ulp) was
// tried: any change of those low bits moves synth-smollm3-F32's prompt
// logits past the reference bound (4.3e-3 -> 5.5e-3), while this form
// keeps every reference figure.
func silu(x float32) float32 { return x / (1 + float32(exp64(-x))) }

// exp64 is e^x in float64 for a float32 x, in operations the vector kernel
// (runtime/simd's vk_swiglu) repeats lane for lane, so the two agree bit
// for bit: x = k·ln2 + r with ln2 split so k·ln2hi is exact (|k| <= 160
// needs 8 bits), e^r by Taylor terms to r^12/12! (|r| <= ln2/2: the first
// term left out is below 2^-52 of the sum), then ·2^k by the exponent
// bits. Its error, a few float64 ulps, changes the float32 rounding of
// e^x only within ~1e-15 of a midpoint. Past the float32 range the result
// is 0 or +inf after rounding, which clamping x preserves.
func exp64(x float32) float64 {
	const (
		log2e = 1.4426950408889634
		ln2hi = 0x1.62e42fefa3800p-1 // ln 2 to 43 bits
		ln2lo = 0x1.ef35793c76730p-45
	)
	xd := min(max(float64(x), -110), 90)
	k := math.RoundToEven(float64(xd * log2e))
	// the conversions keep each product rounded: no FMA, as in the kernel
	r := (xd - float64(k*ln2hi)) - float64(k*ln2lo)
	p := 1.0 / 479001600 // 1/12!
	for _, c := range [...]float64{1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1} {
		p = float64(p*r) + c
	}
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}

// geluTable is llama.cpp's CPU GELU table (quant.GELUTable), shared with
// the Vulkan backend, which uploads the same entries.
var geluTable = quant.GELUTable

// gelu is ggml_vec_gelu_f32 with GGML_GELU_FP16: zero below -10, the
// identity above 10, the F16 table between.
func gelu(table []float32, x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return table[quant.FP32ToFP16(x)]
}

// nativeSwiGLU lets tests run swiglu's portable loop on a machine with
// native kernels.
var nativeSwiGLU = true

// swiglu writes silu(gate) * up into gate.
func swiglu(gate, up []float32) {
	if nativeSwiGLU && simd.SwiGLU(gate, up) {
		return
	}
	for i, g := range gate {
		gate[i] = silu(g) * up[i]
	}
}

// swigluOAI is ggml's swiglu_oai with gpt-oss's constants (α 1.702, limit
// 7): the gate clamped from above, up from both sides, and up + 1.
func swigluOAI(gate, up float32) float32 {
	const alpha, limit = 1.702, 7
	x := min(gate, limit)
	y := min(max(up, -limit), limit)
	g := x / (1 + float32(exp64(alpha*-x)))
	return g * (y + 1)
}
