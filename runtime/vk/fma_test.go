package vk

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/quant"
	"vkchat/runtime/vk/vulkan"
)

// TestFMAExact: common.glsl's fma_exact, scalar and vec4 (every lane),
// rounds a·b + c once, as x86's FMA (quant.FMA32), on random triples and
// on triples where p + c lands on a tie of its rounding and a·b's
// rounding error decides it: there the sum of the errors added to s with
// a rounding to nearest (the scalar form before it became the vec4 one's
// lane; GLSL's fma on llvmpipe is a product and a sum) rounds twice, so
// the test tells the forms apart.
func TestFMAExact(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(4343))
	var abc [][3]float32
	for len(abc) < 1024 {
		a, b := float32(rng.NormFloat64()), float32(rng.NormFloat64())
		c := float32(rng.NormFloat64() * math.Ldexp(1, rng.Intn(40)-20))
		abc = append(abc, [3]float32{a, b, c})
	}
	// a·b next to 1 with a rounding error, c of an ulp of 2 or more so
	// that p + c can fall on a tie
	twice := 0
	for i := 0; twice < 256 && i < 1<<24; i++ {
		a := math.Float32frombits(0x3F800000 + uint32(rng.Intn(64)))
		b := math.Float32frombits(0x3F7FFFFF - uint32(rng.Intn(64)))
		c := float32(math.Ldexp(1+float64(rng.Intn(1<<10))/1024, 22+rng.Intn(8)))
		if rng.Intn(2) == 0 {
			a = -a
		}
		if rng.Intn(2) == 0 {
			c = -c
		}
		if roundsTwice(a, b, c) != quant.FMA32(a, b, c) {
			abc = append(abc, [3]float32{a, b, c})
			twice++
		}
	}
	if twice < 256 {
		t.Fatalf("found %d triples that a rounding to nearest of the errors' sum rounds twice, want 256", twice)
	}
	for len(abc)%4 != 0 {
		abc = append(abc, abc[0])
	}
	in := make([]byte, 16*len(abc))
	for i, x := range abc {
		for j, v := range x {
			binary.LittleEndian.PutUint32(in[16*i+4*j:], math.Float32bits(v))
		}
	}
	inb, err := d.NewBuffer("abc", uint64(len(in)), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inb.Release)
	if err := inb.Write(0, in); err != nil {
		t.Fatal(err)
	}
	outb, err := d.NewBuffer("r", uint64(8*len(abc)), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(outb.Release)
	k, err := d.kernel("fmaexact", 4)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		return r.Dispatch("fmaexact", k, []vulkan.Arg{vulkan.R(inb), vulkan.W(outb)}, []uint32{uint32(len(abc))}, uint32((len(abc)+63)/64), 1, 1)
	})
	raw := make([]byte, 8*len(abc))
	if err := outb.Read(0, raw); err != nil {
		t.Fatal(err)
	}
	got := bytesF32(raw)
	bad := 0
	for i, x := range abc {
		want := quant.FMA32(x[0], x[1], x[2])
		for f, g := range got[2*i : 2*i+2] {
			if math.Float32bits(g) != math.Float32bits(want) {
				if bad < 5 {
					t.Errorf("triple %d (%g, %g, %g), %s form: %#08x, FMA %#08x", i, x[0], x[1], x[2], []string{"scalar", "vec4"}[f], math.Float32bits(g), math.Float32bits(want))
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d results differ from an FMA's", bad, 2*len(abc))
	}
}

// roundsTwice is a·b + c as common.glsl's scalar fma_exact computed it
// before: Dekker's product and TwoSum, then s + (t + e) with t + e rounded
// to nearest; each product converted, so that no compiler fuses it.
func roundsTwice(a, b, c float32) float32 {
	split := func(x float32) (float32, float32) {
		cx := float32(4097 * x)
		h := cx - (cx - x)
		return h, x - h
	}
	p := float32(a * b)
	ah, al := split(a)
	bh, bl := split(b)
	e := ((float32(ah*bh) - p) + float32(ah*bl) + float32(al*bh)) + float32(al*bl)
	s := p + c
	bb := s - p
	tt := (p - (s - bb)) + (c - bb)
	lo := tt + e
	return s + lo
}
