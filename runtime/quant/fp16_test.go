package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The oracle for the conversions is arithmetic, not another implementation:
// a binary16 value is (-1)^s * 2^(e-15) * (1 + m/1024), or m * 2^-24 when e
// is zero, and the rounding must pick the nearest such value, ties to even.

func fp16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch {
	case e == 31 && m == 0:
		return math.Inf(int(s))
	case e == 31:
		return math.NaN()
	case e == 0:
		return s * m * math.Ldexp(1, -24)
	}
	return s * (1 + m/1024) * math.Ldexp(1, e-15)
}

func TestFP16ToFP32Exhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got, want := float64(FP16ToFP32(h)), fp16Value(h)
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("FP16ToFP32(%#04x) = %v, want NaN", h, got)
			}
			// the payload survives widening, as in hardware conversion
			if b := math.Float32bits(FP16ToFP32(h)); b>>13&0x3ff != uint32(h&0x3ff) || b>>31 != uint32(h>>15) {
				t.Fatalf("FP16ToFP32(%#04x) = %#08x loses the payload or sign", h, b)
			}
			continue
		}
		if got != want || math.Signbit(got) != (h&0x8000 != 0) {
			t.Fatalf("FP16ToFP32(%#04x) = %v, want %v", h, got, want)
		}
		if f16tab[h] != FP16ToFP32(h) && !math.IsNaN(want) {
			t.Fatalf("table disagrees at %#04x", h)
		}
		// every finite or infinite value round-trips
		if back := FP32ToFP16(FP16ToFP32(h)); back != h {
			t.Fatalf("FP32ToFP16(FP16ToFP32(%#04x)) = %#04x", h, back)
		}
	}
}

// nearestFP16 is the rounding oracle: among all binary16 values it finds the
// nearest to f, ties to the even encoding; beyond 65520 it is infinity.
func nearestFP16(f float32) uint16 {
	v := float64(f)
	sign := uint16(0)
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	if v >= 65520 {
		return sign | 0x7c00
	}
	// binary search over the monotone positive encodings 0..0x7bff
	lo, hi := 0, 0x7bff
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fp16Value(uint16(mid)) <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	best := lo
	if lo < 0x7bff {
		dl, dh := v-fp16Value(uint16(lo)), fp16Value(uint16(lo+1))-v
		if dh < dl || dh == dl && lo&1 == 1 {
			best = lo + 1
		}
	}
	return sign | uint16(best)
}

func TestFP32ToFP16Rounding(t *testing.T) {
	cases := []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff},
		{65519.996, 0x7bff}, {65520, 0x7c00}, // the midpoint to infinity rounds to even: inf
		{1 + 1.0/2048, 0x3c00},                     // tie between 0x3c00 and 0x3c01: even
		{1 + 3.0/2048, 0x3c02},                     // tie between 0x3c01 and 0x3c02: even
		{1 + 1.0/2048 + 1.0/(1<<20), 0x3c01},       // just above the tie
		{float32(math.Ldexp(1, -24)), 0x0001},      // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},      // half of it ties to even zero
		{float32(math.Ldexp(1.5, -25)), 0x0001},    // above half rounds up
		{float32(math.Ldexp(3, -25)), 0x0002},      // 1.5 ulp ties up to even 2
		{float32(math.Ldexp(1, -14)), 0x0400},      // smallest normal
		{float32(math.Ldexp(1023.5, -24)), 0x0400}, // largest subnormal tie rounds up into the normals
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{float32(math.NaN()), 0x7e00},
		{1e-30, 0}, {-1e30, 0xfc00},
	}
	for _, c := range cases {
		if got := FP32ToFP16(c.f); got != c.want {
			t.Errorf("FP32ToFP16(%g [%#08x]) = %#04x, want %#04x", c.f, math.Float32bits(c.f), got, c.want)
		}
	}
	// random bit patterns over the whole finite range and values clustered
	// around binary16 rounding boundaries
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		var f float32
		if i%2 == 0 {
			f = math.Float32frombits(r.Uint32())
		} else {
			h := uint16(r.IntN(0x7c00))
			mid := (fp16Value(h) + fp16Value(h+1)) / 2
			f = float32(mid) + float32(r.NormFloat64())*float32(mid)*1e-7
			if r.IntN(2) == 0 {
				f = -f
			}
		}
		if math.IsNaN(float64(f)) {
			continue
		}
		if got, want := FP32ToFP16(f), nearestFP16(f); got != want {
			t.Fatalf("FP32ToFP16(%g [%#08x]) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

func TestBF16(t *testing.T) {
	// widening is exact: all 65536 values, and every non-NaN one round-trips
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BF16ToFP32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToFP32(%#04x) = %#08x", h, math.Float32bits(f))
		}
		back := FP32ToBF16(f)
		if math.IsNaN(float64(f)) {
			if back&0x7f80 != 0x7f80 || back&0x7f == 0 || back&0x40 == 0 {
				t.Fatalf("FP32ToBF16(NaN %#04x) = %#04x, want a quiet NaN", h, back)
			}
			continue
		}
		if back != h {
			t.Fatalf("FP32ToBF16(BF16ToFP32(%#04x)) = %#04x", h, back)
		}
	}
	cases := []struct {
		bits uint32
		want uint16
	}{
		{0x3f808000, 0x3f80}, // tie, even below
		{0x3f818000, 0x3f82}, // tie, odd below: up
		{0x3f808001, 0x3f81}, // above the tie
		{0x3f807fff, 0x3f80},
		{0x7f7fffff, 0x7f80}, // max float rounds to infinity
		{0x00008000, 0x0000}, // subnormal tie to even zero (kept, not flushed)
		{0x00018000, 0x0002},
		{0x7f800001, 0x7fc0}, // signalling NaN comes back quiet
		{0xff800000, 0xff80},
	}
	for _, c := range cases {
		if got := FP32ToBF16(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", c.bits, got, c.want)
		}
	}
	// against the oracle: the nearer of the two bf16 neighbours, ties even
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		u := r.Uint32()
		f := math.Float32frombits(u)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		lo := uint16(u >> 16)
		dl := math.Abs(float64(f) - float64(BF16ToFP32(lo)))
		dh := math.Abs(float64(BF16ToFP32(lo+1)) - float64(f))
		if lo&0x7fff == 0x7f7f { // the neighbour above is infinity: compare against 2^128
			dh = math.Ldexp(1, 128) - math.Abs(float64(f))
		}
		want := lo
		if dh < dl || dh == dl && lo&1 == 1 {
			want = lo + 1
		}
		if got := FP32ToBF16(f); got != want {
			t.Fatalf("FP32ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
}
