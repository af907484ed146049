package arch

import "math"

// YaRN's β_fast and β_slow: the rotations (per original context) that mark
// where interpolation starts and ends. llama.cpp's defaults; gpt-oss's
// files do not set them.
const (
	yarnBetaFast = 32
	yarnBetaSlow = 1
)

// yarn resolves a YaRN rotation for r (Scale = 1/factor) with β_fast and
// β_slow, in float32 as ggml_rope_yarn_corr_dims computes it.
func yarn(r Rope, betaFast, betaSlow float32) *YaRN {
	dims, orig, base := float32(r.Dims), float32(r.OrigCtx), r.Base
	corr := func(rot float32) float32 {
		return dims * logf(orig/(rot*2*math.Pi)) / (2 * logf(base))
	}
	lo := max(0, float32(math.Floor(float64(corr(betaFast)))))
	hi := min(dims-1, float32(math.Ceil(float64(corr(betaSlow)))))
	return &YaRN{Low: lo, High: hi, MScale: 1 + 0.1*logf(1/r.Scale)}
}

// yarnMScale is llama.cpp's get_mscale: the YaRN magnitude of a factor
// for an mscale (1 + 0.1·mscale·ln factor; 1 for a factor ≤ 1).
func yarnMScale(factor, mscale float32) float32 {
	if factor <= 1 {
		return 1
	}
	return 0.1*mscale*logf(factor) + 1
}

// yarnLogMulFactor is the cos/sin multiplier llama.cpp's context sets for a
// file with rope.scaling.yarn_log_multiplier (llama-context.cpp): the
// magnitude of mscale 1 over that of mscale_all_dim, with the YaRN
// magnitude ggml's rope multiplies by (YaRN.MScale) divided out, so that
// with mscale_all_dim 1 the rotation keeps unit length.
func yarnLogMulFactor(factor, logMul float32) float32 {
	a := yarnMScale(factor, 1) / yarnMScale(factor, logMul)
	return a * (1 / (1 + 0.1*logf(factor)))
}

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// Ramp is the share of the original (extrapolated) angle in pair i: 1
// below Low, 0 above High, linear between (ggml's rope_yarn_ramp).
func (y *YaRN) Ramp(i int) float32 {
	t := (float32(i) - y.Low) / max(0.001, y.High-y.Low)
	return 1 - min(1, max(0, t))
}
