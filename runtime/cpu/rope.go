package cpu

import (
	"math"

	"vkchat/runtime/plan"
	"vkchat/runtime/simd"
)

// ropeTable precomputes what rope needs for a layer; layers with the same
// rotation share one (one per plan.Rotation), so a position's angles are
// computed once per token, not once per layer.
type ropeTable struct {
	step    float32 // base^(-2/dims)
	factors []float32
	scale   float32
	mscale  float32 // rope.scaling.attn_factor: multiplies cos and sin
	yarn    *plan.YaRN
	neox    bool
	pairs   int
	// The cos and sin of recently rotated positions, slot pos % ropeSlots:
	// every head of a token (and every layer sharing the table) rotates by
	// the same angles, and a batch's positions come back once per layer.
	slotPos  [ropeSlots]int
	cos, sin [ropeSlots][]float32
}

// ropeSlots is the positions a ropeTable keeps: a prefill batch's worth.
const ropeSlots = maxBatch

// ropeFrom is the table of one of the plan's rotations.
func ropeFrom(rot plan.Rotation) *ropeTable {
	// powf(base, -2.0f/n_dims) as ggml computes it, the exponent in float32.
	exp := float32(-2) / float32(rot.Dims)
	t := &ropeTable{
		step:    float32(math.Pow(float64(rot.Base), float64(exp))),
		factors: rot.Factors, scale: rot.Scale, mscale: rot.AttnFactor, neox: rot.NeoX, pairs: rot.Dims / 2,
		yarn: rot.YaRN,
	}
	for i := range t.slotPos {
		t.slotPos[i] = -1
	}
	return t
}

// nativeRope lets tests run apply's portable loop on a machine with native
// kernels.
var nativeRope = true

// apply rotates one head vector in place for position pos; dimensions past
// Rope.Dims pass through. ggml computes the angle by repeated float32
// multiplication (theta *= step starting from the position) rather than pow;
// we do the same so angles far into the context round identically.
func (r *ropeTable) apply(x []float32, pos int) {
	slot := pos % ropeSlots
	if r.slotPos[slot] != pos {
		r.angles(slot, pos)
	}
	cs, sn := r.cos[slot], r.sin[slot]
	if nativeRope && simd.Rope(x, cs, sn, r.neox) {
		return
	}
	for i := 0; i < r.pairs; i++ {
		c, s := cs[i], sn[i]
		a, b := 2*i, 2*i+1
		if r.neox {
			a, b = i, i+r.pairs
		}
		// ggml's x0*c - x1*s and x0*s + x1*c as GCC contracts them:
		// the first product fused into the sum, the second rounded
		// (products rounded apart put Gemma 4's F16 keys an ulp off
		// llama.cpp's often enough to move its logits by 4e-2)
		x0, x1 := x[a], x[b]
		x[a] = fma32(x0, c, -float32(x1*s))
		x[b] = fma32(x0, s, float32(x1*c))
	}
}

// applyRows is apply on each width-value row of x (a token's heads), in
// one native call where there is one.
func (r *ropeTable) applyRows(x []float32, width, pos int) {
	slot := pos % ropeSlots
	if r.slotPos[slot] != pos {
		r.angles(slot, pos)
	}
	if nativeRope && simd.RopeRows(x, width, r.cos[slot], r.sin[slot], r.neox) {
		return
	}
	for o := 0; o+width <= len(x); o += width {
		r.apply(x[o:o+width], pos)
	}
}

// angles fills cache slot slot for pos.
func (r *ropeTable) angles(slot, pos int) {
	if len(r.cos[slot]) < r.pairs {
		r.cos[slot], r.sin[slot] = make([]float32, r.pairs), make([]float32, r.pairs)
	}
	cs, sn := r.cos[slot], r.sin[slot]
	theta := float32(pos)
	for i := 0; i < r.pairs; i++ {
		t := theta
		if r.factors != nil {
			t /= r.factors[i]
		}
		mscale := r.mscale
		if y := r.yarn; y != nil {
			// ggml's rope_yarn: interpolated and original angles
			// blended by the pair's ramp, the magnitude raised
			ramp := y.Ramp(i)
			t = float32(t*r.scale)*(1-ramp) + t*ramp
			mscale *= y.MScale
		} else {
			t *= r.scale
		}
		c, s := float32(math.Cos(float64(t))), float32(math.Sin(float64(t)))
		if mscale != 1 {
			c, s = c*mscale, s*mscale
		}
		cs[i], sn[i] = c, s
		theta *= r.step
	}
	r.slotPos[slot] = pos
}
