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

	// The cos and sin of the last position rotated, kept because every
	// head of a token rotates by the same angles: computing them once per
	// token instead of once per head was ~15% of prefill CPU time.
	cachePos int
	cacheOK  bool
	cs       []float32 // cos, sin per pair
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
	if !r.cacheOK || r.cachePos != pos {
		r.angles(pos)
	}
	for i := 0; i < r.pairs; i++ {
		c, s := r.cs[2*i], r.cs[2*i+1]
		a, b := 2*i, 2*i+1
		if r.neox {
			a, b = i, i+r.pairs
		}
		x0, x1 := x[a], x[b]
		x[a] = x0*c - x1*s
		x[b] = x0*s + x1*c
	}
}

// angles fills the cos/sin cache for pos.
func (r *ropeTable) angles(pos int) {
	if len(r.cs) < 2*r.pairs {
		r.cs = make([]float32, 2*r.pairs)
	}
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
		r.cs[2*i], r.cs[2*i+1] = c, s
		theta *= r.step
	}
	r.cachePos, r.cacheOK = pos, true
}
