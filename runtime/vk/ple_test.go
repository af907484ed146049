package vk

import (
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// TestPLEKernels checks ple.comp against plain loops: MODE 0 turns each
// token's projection and table row into its per-layer inputs (per layer:
// rms(proj/√embd)·norm + row·√P, × 1/√2), MODE 1 one layer's gate into
// gelu(gate)·input; and scale.comp multiplies the stream. Tokens past
// the step's count are left alone.
func TestPLEKernels(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(26))
	const P, layers, ntok, cap = 32, 6, 3, 4
	const inStride, gStride, embd = 256, 64, 256
	const eps = 1e-6
	proj := randomVec(cap*inStride, rng)
	raw := randomVec(cap*layers*P, rng)
	norm := randomVec(P, rng)
	gate := randomVec(cap*gStride, rng)
	for i := range gate {
		gate[i] *= 4 // reach the table's ends
	}
	buf := func(name string, v []float32) *vulkan.Buffer {
		b, err := d.NewBuffer(name, uint64(4*len(v)), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Write(0, f32bytes(v)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	inB, rawB, normB, gateB := buf("in", proj), buf("raw", raw), buf("norm", norm), buf("gate", gate)
	step := stepBuffer(t, d, ntok, 0, nil)
	sqrt := func(x float64) float32 { return float32(math.Sqrt(x)) }
	push := func(layer int) []uint32 {
		return []uint32{P, layers, inStride, gStride, uint32(layer), math.Float32bits(1 / sqrt(embd)), math.Float32bits(sqrt(P)), math.Float32bits(1 / sqrt(2)), math.Float32bits(eps)}
	}
	sg := d.Info.SureSubgroup() * 4
	k0, err := d.kernel("ple", 9*4, sg, 0)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := d.kernel("ple", 9*4, sg, 1)
	if err != nil {
		t.Fatal(err)
	}
	const layer = 4
	unused, err := d.geluArg(false)
	if err != nil {
		t.Fatal(err)
	}
	gelu, err := d.geluArg(true)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		if err := r.Dispatch("ple inputs", k0, []vulkan.Arg{{B: rawB, Format: fmtU32}, {B: normB, Format: fmtU32}, {B: inB, Write: true}, {B: gateB, Write: true}, vulkan.R(step), unused}, push(0), cap, 1, 1); err != nil {
			return err
		}
		return r.Dispatch("ple gate", k1, []vulkan.Arg{{B: rawB, Format: fmtU32}, {B: normB, Format: fmtU32}, {B: inB, Write: true}, {B: gateB, Write: true}, vulkan.R(step), gelu}, push(layer), cap, 1, 1)
	})
	wantIn := append([]float32(nil), proj...)
	wantGate := append([]float32(nil), gate...)
	for tk := 0; tk < ntok; tk++ {
		for l := 0; l < layers; l++ {
			v := make([]float32, P)
			for j := range v {
				v[j] = proj[tk*inStride+l*P+j] * (1 / sqrt(embd))
			}
			refNorm(v, norm, eps)
			for j := range v {
				wantIn[tk*inStride+l*P+j] = (v[j] + raw[tk*layers*P+l*P+j]*sqrt(P)) * (1 / sqrt(2))
			}
		}
		for j := 0; j < P; j++ {
			wantGate[tk*gStride+j] = refGELU(gate[tk*gStride+j]) * wantIn[tk*inStride+layer*P+j]
		}
	}
	got := make([]byte, 4*len(proj))
	inB.Read(0, got)
	if e := nmse(wantIn, bytesF32(got)); e > 1e-10 {
		t.Errorf("per-layer inputs: NMSE %.3g", e)
	}
	got = make([]byte, 4*len(gate))
	gateB.Read(0, got)
	g := bytesF32(got)
	if e := nmse(wantGate, g); e > 1e-10 {
		t.Errorf("gelu(gate)·input: NMSE %.3g", e)
	}
	for j := ntok * gStride; j < len(g); j++ {
		if g[j] != gate[j] {
			t.Fatalf("gate of token %d past the step changed", j/gStride)
		}
	}

	x := randomVec(cap*inStride, rng)
	xB := buf("x", x)
	ks, err := d.kernel("scale", 3*4, 64)
	if err != nil {
		t.Fatal(err)
	}
	const s = 0.37
	runOnce(t, d, func(r *vulkan.Recorder) error {
		return r.Dispatch("scale", ks, []vulkan.Arg{{B: xB, Write: true}, vulkan.R(step)}, []uint32{embd - 16, inStride, math.Float32bits(s)}, cap, 1, 1)
	})
	got = make([]byte, 4*len(x))
	xB.Read(0, got)
	xs := bytesF32(got)
	for i, v := range x {
		want := v
		if i/inStride < ntok && i%inStride < embd-16 {
			want = v * s
		}
		if xs[i] != want {
			t.Fatalf("x[%d] = %g, want %g", i, xs[i], want)
		}
	}
}
