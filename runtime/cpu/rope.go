package cpu

import (
	"math"

	"vkchat/models"
)

// ropeTable precomputes what rope needs per model.
type ropeTable struct {
	step    float32 // base^(-2/dims)
	factors []float32
	scale   float32
	neox    bool
	pairs   int
}

func newRope(c *models.Config) ropeTable {
	r := c.Rope
	return ropeTable{
		step:    float32(math.Pow(float64(r.Base), -2.0/float64(r.Dims))),
		factors: r.FreqFactors, scale: r.Scale, neox: r.NeoX, pairs: r.Dims / 2,
	}
}

// apply rotates one head vector in place for position pos. ggml computes the
// angle by repeated float32 multiplication (theta *= step starting from the
// position) rather than pow; we do the same so angles far into the context
// round identically.
func (r *ropeTable) apply(x []float32, pos int) {
	theta := float32(pos)
	for i := 0; i < r.pairs; i++ {
		t := theta
		if r.factors != nil {
			t /= r.factors[i]
		}
		t *= r.scale
		c, s := float32(math.Cos(float64(t))), float32(math.Sin(float64(t)))
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
