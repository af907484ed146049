package vk

import (
	"math"
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// TestTanhExact: common.glsl's tanh_exact gives the CPU backend's tanhf
// (float64 tanh rounded once) on every 127th f32 from 2^-14 to 16, both
// signs (about 2.4 million values: each range its reduction takes, the
// polynomial's small end, the clamp's), and on zeros, the 2^-12 edge and
// the infinities; the device's tanh (the soft-caps' before) gives another
// f32 for many of them, so the test tells the two apart.
func TestTanhExact(t *testing.T) {
	d := testDevice(t)
	var xs []float32
	for b := math.Float32bits(0x1p-14); b <= math.Float32bits(16); b += 127 {
		x := math.Float32frombits(b)
		xs = append(xs, x, -x)
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 0x1p-12, 0x1p-12 + 0x1p-35, 10, 9.5, 100, float32(math.Inf(1)), float32(math.Inf(-1))} {
		xs = append(xs, x, -x)
	}
	got := tanhOn(t, d, "tanhexact", xs)
	bad := 0
	for i, x := range xs {
		want := float32(math.Tanh(float64(x)))
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			if bad < 5 {
				t.Errorf("tanh(%g): %#08x, tanhf %#08x", x, math.Float32bits(got[i]), math.Float32bits(want))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ from tanhf", bad, len(xs))
	}
	dev := tanhOn(t, d, "tanhdevice", xs)
	other := 0
	for i, x := range xs {
		if math.Float32bits(dev[i]) != math.Float32bits(float32(math.Tanh(float64(x)))) {
			other++
		}
	}
	t.Logf("the device's tanh: %d of %d values differ from tanhf", other, len(xs))
	if other == 0 {
		t.Error("the device's tanh gives tanhf's bits on every value: the test does not tell it apart")
	}
}

// tanhOn runs the test kernel k on xs.
func tanhOn(t *testing.T, d *gpu, k string, xs []float32) []float32 {
	t.Helper()
	inb, err := d.NewBuffer("x", uint64(4*len(xs)), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inb.Release)
	if err := inb.Write(0, f32bytes(xs)); err != nil {
		t.Fatal(err)
	}
	outb, err := d.NewBuffer("y", uint64(4*len(xs)), vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(outb.Release)
	kn, err := d.kernel(k, 4)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		return r.Dispatch(k, kn, []vulkan.Arg{vulkan.R(inb), vulkan.W(outb)}, []uint32{uint32(len(xs))}, uint32((len(xs)+63)/64), 1, 1)
	})
	raw := make([]byte, 4*len(xs))
	if err := outb.Read(0, raw); err != nil {
		t.Fatal(err)
	}
	return bytesF32(raw)
}
