package arch

import "math"

// YaRN's β_fast and β_slow: the rotations (per original context) that mark
// where interpolation starts and ends. llama.cpp's defaults; gpt-oss's
// files do not set them.
const (
	yarnBetaFast = 32
	yarnBetaSlow = 1
)

// yarn resolves a YaRN rotation for r (Scale = 1/factor), in float32 as
// ggml_rope_yarn_corr_dims computes it.
func yarn(r Rope) *YaRN {
	dims, orig, base := float32(r.Dims), float32(r.OrigCtx), r.Base
	corr := func(rot float32) float32 {
		return dims * logf(orig/(rot*2*math.Pi)) / (2 * logf(base))
	}
	lo := max(0, float32(math.Floor(float64(corr(yarnBetaFast)))))
	hi := min(dims-1, float32(math.Ceil(float64(corr(yarnBetaSlow)))))
	return &YaRN{Low: lo, High: hi, MScale: 1 + 0.1*logf(1/r.Scale)}
}

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// Ramp is the share of the original (extrapolated) angle in pair i: 1
// below Low, 0 above High, linear between (ggml's rope_yarn_ramp).
func (y *YaRN) Ramp(i int) float32 {
	t := (float32(i) - y.Low) / max(0.001, y.High-y.Low)
	return 1 - min(1, max(0, t))
}
