package cpu

import (
	"math"

	"vkchat/models"
)

// ropeTable precomputes what rope needs for one layer.
type ropeTable struct {
	step    float32 // base^(-2/dims)
	factors []float32
	scale   float32
	mscale  float32 // rope.scaling.attn_factor: multiplies cos and sin
	neox    bool
	pairs   int
}

// newRope is the rotation of layer lc for a context of ctx positions
// (which picks LongRoPE's factor set); ok is false on a NoPE layer.
func newRope(c *models.Config, lc models.LayerConfig, ctx int) (ropeTable, bool) {
	r := c.Rope
	if !lc.Rope {
		return ropeTable{}, false
	}
	// powf(base, -2.0f/n_dims) as ggml computes it, the exponent in float32.
	exp := float32(-2) / float32(r.Dims)
	return ropeTable{
		step:    float32(math.Pow(float64(lc.RopeBase), float64(exp))),
		factors: r.Factors(ctx), scale: lc.RopeScale, mscale: r.AttnFactor, neox: r.NeoX, pairs: r.Dims / 2,
	}, true
}

// apply rotates one head vector in place for position pos; dimensions past
// Rope.Dims pass through. ggml computes the angle by repeated float32
// multiplication (theta *= step starting from the position) rather than pow;
// we do the same so angles far into the context round identically.
func (r *ropeTable) apply(x []float32, pos int) {
	theta := float32(pos)
	for i := 0; i < r.pairs; i++ {
		t := theta
		if r.factors != nil {
			t /= r.factors[i]
		}
		t *= r.scale
		c, s := float32(math.Cos(float64(t))), float32(math.Sin(float64(t)))
		if r.mscale != 1 {
			c, s = c*r.mscale, s*r.mscale
		}
		a, b := 2*i, 2*i+1
		if r.neox {
			a, b = i, i+r.pairs
		}
		x0, x1 := x[a], x[b]
		x[a] = x0*c - x1*s
		x[b] = x0*s + x1*c
		theta *= r.step
	}
}
