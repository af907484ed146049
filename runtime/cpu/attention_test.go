package cpu

import (
	"math"
	"testing"

	"vkchat/runtime/quant"
)

// round16 takes a shortcut in F16's normal range; it must agree with the
// full conversion everywhere.
func TestRound16MatchesConversion(t *testing.T) {
	check := func(x float32) {
		want := quant.FP16ToFP32(quant.FP32ToFP16(x))
		got := round16(x)
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("round16(%g) = %g, conversion gives %g", x, got, want)
		}
	}
	for e := -30; e <= 20; e++ {
		base := float32(math.Ldexp(1, e))
		for i := 0; i < 20000; i++ {
			x := base * (1 + float32(i)/20000)
			check(x)
			check(-x)
		}
	}
	for _, x := range []float32{0, 65504, 65519, 65520, 1e9, float32(math.Inf(1)), 6.1e-5, 5.96e-8} {
		check(x)
	}
}

// attendOnline must equal the textbook softmax-weighted sum when it does
// not round to F16.
func TestAttendOnlineMatchesSoftmax(t *testing.T) {
	const hd, span = 8, 13
	q := make([]float32, hd)
	keys := make([]float32, span*hd)
	vals := make([]float32, span*hd)
	for i := range q {
		q[i] = float32(math.Sin(float64(i)))
	}
	for i := range keys {
		keys[i] = float32(math.Cos(float64(i) * 0.37))
		vals[i] = float32(math.Sin(float64(i) * 0.11))
	}
	scale := float32(1 / math.Sqrt(hd))
	out := make([]float32, hd)
	attendOnline(q, keys, vals, out, span, scale, 0, make([]float32, hd), false)
	w := make([]float64, span)
	var sum float64
	for t0 := 0; t0 < span; t0++ {
		var d float64
		for i := 0; i < hd; i++ {
			d += float64(q[i]) * float64(keys[t0*hd+i])
		}
		w[t0] = math.Exp(d * float64(scale))
		sum += w[t0]
	}
	for i := 0; i < hd; i++ {
		var want float64
		for t0 := 0; t0 < span; t0++ {
			want += w[t0] / sum * float64(vals[t0*hd+i])
		}
		if math.Abs(want-float64(out[i])) > 1e-5 {
			t.Errorf("out[%d] = %g, softmax gives %g", i, out[i], want)
		}
	}
}
