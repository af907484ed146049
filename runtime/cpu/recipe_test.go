package cpu

import (
	"math"
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/quant"
)

// gelu follows llama.cpp's CPU table: the input rounded to F16, the tanh
// form computed in float32 and stored as F16; identity from 10 up, zero
// from -10 down.
func TestGELUTable(t *testing.T) {
	tab := geluTable()
	ref := func(x float64) float32 {
		g := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x)))
		return quant.FP16ToFP32(quant.FP32ToFP16(float32(g)))
	}
	for _, c := range []struct{ x, want float32 }{
		{10, 10}, {12.5, 12.5}, {-10, 0}, {-30, 0},
		{0, 0},
		{1, ref(1)}, {-1, ref(-1)}, {0.5, ref(0.5)}, {3, ref(3)}, {-2.5, ref(-2.5)},
		// 1.0001 is 1 in F16: the table entry of 1, not GELU(1.0001).
		{1.0001, ref(1)},
		// 9.99 rounds to 9.9921875 in F16, whose GELU is itself.
		{9.99, ref(float64(quant.FP16ToFP32(quant.FP32ToFP16(9.99))))},
	} {
		if got := gelu(tab, c.x); got != c.want {
			t.Errorf("gelu(%g) = %g, want %g", c.x, got, c.want)
		}
	}
}

// A soft-cap applies c·tanh(s/c) to each scaled score before the softmax.
func TestAttendOnlineSoftcap(t *testing.T) {
	const hd, span, c = 8, 9, 2.0
	q := make([]float32, hd)
	keys := make([]float32, span*hd)
	vals := make([]float32, span*hd)
	for i := range q {
		q[i] = float32(3 * math.Sin(float64(i)+1))
	}
	for i := range keys {
		keys[i] = float32(2 * math.Cos(float64(i)*0.37))
		vals[i] = float32(math.Sin(float64(i) * 0.11))
	}
	const scale = 0.5
	out := make([]float32, hd)
	attendOnline(q, keys, vals, out, span, scale, c, make([]float32, hd), false)
	w := make([]float64, span)
	var sum float64
	for k := 0; k < span; k++ {
		var d float64
		for i := 0; i < hd; i++ {
			d += float64(q[i]) * float64(keys[k*hd+i])
		}
		w[k] = math.Exp(c * math.Tanh(d*scale/c))
		sum += w[k]
	}
	for i := 0; i < hd; i++ {
		var want float64
		for k := 0; k < span; k++ {
			want += w[k] / sum * float64(vals[k*hd+i])
		}
		if math.Abs(want-float64(out[i])) > 1e-5 {
			t.Errorf("out[%d] = %g, capped softmax gives %g", i, out[i], want)
		}
	}
}

// Partial rotary dims rotate only the first Dims of a head (NeoX pairs i,
// i+Dims/2); the rest pass through. attn_factor scales the rotated part.
func TestRopePartialAndAttnFactor(t *testing.T) {
	c := &arch.Config{HeadDim: 8, Rope: arch.Rope{Dims: 4, Base: 10000, NeoX: true, Scale: 1, AttnFactor: 2}}
	r, ok := newRope(c, arch.LayerConfig{Rope: true, RopeBase: 10000, RopeScale: 1}, 16)
	if !ok {
		t.Fatal("layer with RoPE reported as NoPE")
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	r.apply(x, 3)
	// pair (0,2) at angle 3, pair (1,3) at angle 3·10000^(-1/2).
	for _, p := range []struct {
		a, b  int
		theta float64
	}{{0, 2, 3}, {1, 3, 3 * math.Pow(10000, -0.5)}} {
		x0, x1 := float64(p.a+1), float64(p.b+1)
		wa := 2 * (x0*math.Cos(p.theta) - x1*math.Sin(p.theta))
		wb := 2 * (x0*math.Sin(p.theta) + x1*math.Cos(p.theta))
		if math.Abs(float64(x[p.a])-wa) > 1e-5 || math.Abs(float64(x[p.b])-wb) > 1e-5 {
			t.Errorf("pair (%d,%d) = (%g,%g), want (%g,%g)", p.a, p.b, x[p.a], x[p.b], wa, wb)
		}
	}
	for i := 4; i < 8; i++ {
		if x[i] != float32(i+1) {
			t.Errorf("dim %d past the rotary dims changed to %g", i, x[i])
		}
	}
	if _, ok := newRope(c, arch.LayerConfig{Rope: false}, 16); ok {
		t.Error("a NoPE layer got a rotation")
	}
}
