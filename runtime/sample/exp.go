package sample

import "math"

// expNonPos is exp(x) for x ≤ 0 (and -Inf), accurate to about 1e-11
// relative — far finer than the float32 probabilities it feeds. The chain
// needs one exponential per vocabulary entry per token, and math.Exp was
// most of the sampling time for a 152k vocabulary.
//
// x = (k/32)·ln2 + r with |r| ≤ ln2/64, so exp(x) = 2^(k/32)·e^r: the
// fractional power of two comes from a table and e^r needs only a quartic.
func expNonPos(x float64) float64 {
	// Below this 2^k is subnormal; such weights are 1e-307 of the
	// maximum's and cannot change any float32 result.
	if x < -708 {
		return 0
	}
	const (
		scale = 32 / math.Ln2
		// ln2/32 split in two (fdlibm's ln2 halves over 32) so that k·hi
		// is exact for every k in range.
		hi = 6.93147180369123816490e-01 / 32
		lo = 1.90821492927058770002e-10 / 32
	)
	// Round to nearest; x ≤ 0 keeps the conversion in range.
	k := -int64(0.5 - x*scale)
	kf := float64(k)
	r := (x - kf*hi) - kf*lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24))))
	return p * exp2Frac[k&31] * math.Float64frombits(uint64((k>>5)+1023)<<52)
}

// exp2Frac[j] = 2^(j/32).
var exp2Frac = func() (t [32]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 32)
	}
	return t
}()
