package cpu

import (
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// pleScratch holds a batch's per-layer embedding inputs (gemma4 E2B/E4B,
// plan.PerLayerInputs).
type pleScratch struct {
	in   []float32 // [n x layers·P]: token i's input for layer l at i·layers·P + l·P
	row  []float32 // one token's gathered table row [layers·P]
	gate []float32 // [n x P]
}

func newPLEScratch(ple *plan.PerLayerInput, layers, n int) *pleScratch {
	if ple == nil {
		return nil
	}
	p, l := ple.Width, layers
	return &pleScratch{in: make([]float32, n*l*p), row: make([]float32, l*p), gate: make([]float32, n*p)}
}

func (p *pleScratch) bytes() int64 {
	if p == nil {
		return 0
	}
	return int64(len(p.in)+len(p.row)+len(p.gate)) * 4
}

// pleInputs computes each batch token's per-layer inputs from its id and
// its scaled embedding in s.x, in llama.cpp's order of operations:
// rms(Proj·x × 1/√embd)·norm per layer, plus the table row × √P, × 1/√2.
// The table is read from the mapped file one token's row at a time.
func (b *Backend) pleInputs(ple *plan.PerLayerInput, tokens []int32) {
	ps := b.s.ple
	n, e, p := len(tokens), b.plan.Embd, ple.Width
	width := p * len(b.plan.Layers)
	in := ps.in[:n*width]
	quant.MatMul(in, matrix(ple.Proj), b.s.x[:n*e], n)
	scaleAll(in, 1/float32(math.Sqrt(float64(e)))) // 1.0f/sqrtf(n_embd)
	rmsNormRows(in, p, b.pleNorm, b.plan.NormEps)
	rowBytes := len(ple.Token.Data) / ple.Token.Rows
	tokScale := float32(math.Sqrt(float64(p)))
	inv2 := 1 / float32(math.Sqrt2)
	for i, t := range tokens {
		_ = quant.Dequantize(ple.Token.Type, ple.Token.Data[int(t)*rowBytes:(int(t)+1)*rowBytes], ps.row)
		dst := in[i*width : (i+1)*width]
		for j, v := range ps.row {
			dst[j] = (dst[j] + float32(v*tokScale)) * inv2
		}
	}
}

// pleLayer adds layer l's per-layer embedding term to the stream:
// x += rms(Proj·(gelu(Gate·x) ⊙ input_l))·post_norm.
func (b *Backend) pleLayer(o *plan.PerLayerEmbedding, n int) {
	l, ps, s := o.Layer, b.s.ple, &b.s
	e, p := b.plan.Embd, o.W.Gate.Rows
	width := p * len(b.plan.Layers)
	g := ps.gate[:n*p]
	quant.MatMul(g, matrix(o.W.Gate), s.x[:n*e], n)
	for i := 0; i < n; i++ {
		in := ps.in[i*width+l*p : i*width+(l+1)*p]
		for j := range in {
			g[i*p+j] = gelu(b.gelu, g[i*p+j]) * in[j]
		}
	}
	quant.MatMul(s.proj[:n*e], matrix(o.W.Proj), g, n)
	rmsNormRows(s.proj[:n*e], e, b.layers[l].pleNorm, o.Eps)
	addTo(s.x[:n*e], s.proj[:n*e])
}
