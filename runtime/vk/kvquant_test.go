package vk

import (
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/quant"
	"vkchat/runtime/vk/vulkan"
)

// fwhtOrder is the orthonormal Walsh-Hadamard transform of each n-chunk of
// x, written recursively rather than as the shaders' stages: each value
// times the f32 1/sqrtf(n) first, as ggml's CPU fwht, then both halves
// transformed and their sums and differences taken; with scaleLast the
// scale comes after the butterflies instead.
func fwhtOrder(x []float32, n int, scaleLast bool) {
	sc := float32(1 / math.Sqrt(float64(n)))
	var rec func(z []float32)
	rec = func(z []float32) {
		h := len(z) / 2
		if h == 0 {
			return
		}
		rec(z[:h])
		rec(z[h:])
		for j := 0; j < h; j++ {
			a, b := z[j], z[j+h]
			z[j], z[j+h] = a+b, a-b
		}
	}
	for c := 0; c+n <= len(x); c += n {
		y := x[c : c+n]
		if !scaleLast {
			for i := range y {
				y[i] *= sc
			}
		}
		rec(y)
		if scaleLast {
			for i := range y {
				y[i] *= sc
			}
		}
	}
}

// TestKVQuantRotationOrder: kvquant.comp rotates keys (order 128, whose
// 1/√n is not a power of two) and values (order 64) as ggml's CPU fwht
// does, the scale before the butterflies, to the bit: the kernel writes
// f32 halves here so nothing else rounds. The rows include values that
// the other order (scale last) rounds to another f16, so the test tells
// the two orders apart.
func TestKVQuantRotationOrder(t *testing.T) {
	d := testDevice(t)
	const hd, rotK, rotV, tokens = 128, 128, 64, 256
	rng := rand.New(rand.NewSource(43))
	ks, vs := make([]float32, tokens*hd), make([]float32, tokens*hd)
	for i := range ks {
		ks[i], vs[i] = float32(rng.NormFloat64()*3), float32(rng.NormFloat64()*3)
	}
	buf := func(name string, data []float32) *vulkan.Buffer {
		b, err := d.NewBuffer(name, uint64(4*len(data)), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Release)
		if err := b.Write(0, f32bytes(data)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	ksb, vsb := buf("ks", ks), buf("vs", vs)
	kc, vc := buf("kc", make([]float32, tokens*hd)), buf("vc", make([]float32, tokens*hd))
	step := stepBuffer(t, d, tokens, 0, nil)
	k, err := d.kernel("kvquant", 3*4, hd, kvTypeCode(backend.KVF32), kvTypeCode(backend.KVF32), rotK, rotV)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		push := []uint32{tokens, math.Float32bits(hadamardScale(rotK)), math.Float32bits(hadamardScale(rotV))}
		return r.Dispatch("kvquant", k, []vulkan.Arg{vulkan.R(ksb), vulkan.R(vsb), {B: kc, Write: true, Format: fmtU32}, {B: vc, Write: true, Format: fmtU32}, vulkan.R(step)},
			push, tokens, 1, 2)
	})
	for _, c := range []struct {
		name string
		in   []float32
		out  *vulkan.Buffer
		n    int
	}{{"keys", ks, kc, rotK}, {"values", vs, vc, rotV}} {
		raw := make([]byte, 4*len(c.in))
		if err := c.out.Read(0, raw); err != nil {
			t.Fatal(err)
		}
		got := bytesF32(raw)
		first, last := append([]float32(nil), c.in...), append([]float32(nil), c.in...)
		fwhtOrder(first, c.n, false)
		fwhtOrder(last, c.n, true)
		f16Off := 0
		for i := range first {
			if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s (order %d) value %d: %g, ggml's order %g (scale last: %g)", c.name, c.n, i, got[i], first[i], last[i])
			}
			if quant.FP32ToFP16(first[i]) != quant.FP32ToFP16(last[i]) {
				f16Off++
			}
		}
		t.Logf("%s (order %d): %d values round to another f16 with the scale last", c.name, c.n, f16Off)
		if c.n == 128 && f16Off == 0 {
			t.Errorf("%s: no value rounds to another f16 with the scale last; the rows do not tell the orders apart", c.name)
		}
	}
}
