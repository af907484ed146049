package cpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is a*b+c rounded once to float32 (ties to even), computed
// with enough bits that nothing rounds before that.
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(400).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// TestFMA32RoundsOnce checks fma32 against exact arithmetic on random
// operands and on operands built so that the exact result sits within
// float64's rounding of a float32 midpoint, where rounding to float64 and
// then to float32 (the double rounding fma32 avoids) breaks the tie the
// wrong way. The test counts those cases, so it fails if it stops
// generating them.
func TestFMA32RoundsOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randFloat := func() float32 {
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
	check := func(a, b, c float32) {
		t.Helper()
		got, want := fma32(a, b, c), exactFMA32(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for i := 0; i < 100000; i++ {
		check(randFloat(), randFloat(), randFloat())
	}
	for _, v := range [][3]float32{
		{0, 0, 0}, {1, 1, -1}, {-0.0, 1, 0}, {math.MaxFloat32, 2, -math.MaxFloat32},
		{1e-45, 0.5, 0}, {1e-45, 1e-45, 1e-45}, {float32(math.Inf(1)), 1, 1}, {3, 1.0 / 3, -1},
	} {
		check(v[0], v[1], v[2])
	}
	// a*b close to half an ulp of c: the exact sum is a float32 midpoint
	// plus a remainder smaller than float64's rounding
	naiveWrong := 0
	for i := 0; i < 200000; i++ {
		c := float32(1 + r.Float64())
		halfUlp := math.Exp2(math.Floor(math.Log2(float64(c))) - 24)
		a := float32(1 + r.Float64())
		b := float32(halfUlp / float64(a))
		if r.IntN(2) == 0 {
			a, c = -a, -c
		}
		check(a, b, c)
		if float32(math.FMA(float64(a), float64(b), float64(c))) != exactFMA32(a, b, c) {
			naiveWrong++
		}
	}
	if naiveWrong == 0 {
		t.Fatal("no operands hit a double-rounding case: the midpoint cases test nothing")
	}
	t.Logf("%d midpoint cases where rounding through float64 is wrong", naiveWrong)
}
