package cpu

import (
	"math"

	"vkchat/runtime/arch"
	"vkchat/runtime/quant"
)

// pleScratch holds a batch's per-layer embedding inputs (gemma4 E2B/E4B,
// arch.PerLayerEmbd).
type pleScratch struct {
	in   []float32 // [n x layers·P]: token i's input for layer l at i·layers·P + l·P
	row  []float32 // one token's gathered table row [layers·P]
	gate []float32 // [n x P]
}

func newPLEScratch(m *arch.Model, n int) *pleScratch {
	if m.PLE == nil {
		return nil
	}
	p, l := m.PLE.Width, len(m.Layers)
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
func (b *Backend) pleInputs(tokens []int32) {
	ple, ps := b.m.PLE, b.s.ple
	n, e, p := len(tokens), b.m.Embd, ple.Width
	width := p * len(b.m.Layers)
	in := ps.in[:n*width]
	quant.MatMul(in, matrix(ple.Proj), b.s.x[:n*e], n)
	scaleAll(in, 1/float32(math.Sqrt(float64(e)))) // 1.0f/sqrtf(n_embd)
	rmsNormRows(in, p, b.pleNorm, b.m.NormEps)
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
func (b *Backend) pleLayer(l, n int) {
	L, ps, s := &b.m.Layers[l], b.s.ple, &b.s
	e, p := b.m.Embd, b.m.PLE.Width
	width := p * len(b.m.Layers)
	g := ps.gate[:n*p]
	quant.MatMul(g, matrix(L.PLE.Gate), s.x[:n*e], n)
	for i := 0; i < n; i++ {
		in := ps.in[i*width+l*p : i*width+(l+1)*p]
		for j := range in {
			g[i*p+j] = gelu(b.gelu, g[i*p+j]) * in[j]
		}
	}
	quant.MatMul(s.proj[:n*e], matrix(L.PLE.Proj), g, n)
	rmsNormRows(s.proj[:n*e], e, b.layers[l].pleNorm, b.m.NormEps)
	addTo(s.x[:n*e], s.proj[:n*e])
}
