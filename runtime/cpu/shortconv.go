package cpu

import (
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// convScratch is the short-convolution layers' batch buffers: the in_proj
// output (b, c and u per token) and the gated convolution output.
type convScratch struct {
	bcu, y []float32
}

func newConvScratch(p *plan.Plan, n int) *convScratch {
	if p.ShortConvL == 0 {
		return nil
	}
	return &convScratch{bcu: make([]float32, n*3*p.Embd), y: make([]float32, n*p.Embd)}
}

func (s *convScratch) bytes() int64 {
	if s == nil {
		return 0
	}
	return 4 * int64(len(s.bcu)+len(s.y))
}

// shortConv is an lfm2 convolution layer's mixer on the normed input in
// (n tokens), leaving out_proj·(c ⊙ y) in s.proj (see runtime/arch/lfm2.go). The
// state holds, per tap t (oldest first) and channel ch, the value
// (b⊙u)[ch] of the token L-1-t positions back, at state[t*embd+ch].
func (b *Backend) shortConv(l int, o *plan.ShortConv, in []float32, n int) {
	e, L := b.plan.Embd, o.L
	sc, cs := o.W, b.conv
	state, taps := b.hybrid.conv[l], b.layers[l].convTaps
	quant.MatMul(cs.bcu[:n*3*e], matrix(sc.InProj), in, n)
	ShortConv(state, taps, cs.bcu[:n*3*e], cs.y[:n*e], n, e, L)
	quant.MatMul(b.s.proj[:n*e], matrix(sc.OutProj), cs.y[:n*e], n)
}

// ShortConv runs the convolution over n tokens: bcu holds each token's
// in_proj output (b, c and u, embd each), taps each channel's L weights
// (oldest first), state the last L-1 values of b·u per channel ([L-1][embd],
// oldest first; updated). It writes c·conv(b·u) to y (embd per token).
// The sum is in ggml_ssm_conv's order, one float32 accumulator. Exported
// as the reference the Vulkan kernel is checked against.
func ShortConv(state, taps, bcu, y []float32, n, embd, L int) {
	e := embd
	for i := 0; i < n; i++ {
		row := bcu[i*3*e : (i+1)*3*e]
		bg, cg, u := row[:e], row[e:2*e], row[2*e:]
		yi := y[i*e : (i+1)*e]
		for ch := 0; ch < e; ch++ {
			cur := bg[ch] * u[ch]
			w := taps[ch*L : (ch+1)*L]
			var sum float32
			for t := 0; t < L-1; t++ {
				sum += state[t*e+ch] * w[t]
			}
			sum += cur * w[L-1]
			for t := 0; t < L-2; t++ {
				state[t*e+ch] = state[(t+1)*e+ch]
			}
			state[(L-2)*e+ch] = cur
			yi[ch] = cg[ch] * sum
		}
	}
}
