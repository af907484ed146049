package vk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sync"
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"

	"vkchat/runtime/vk/vulkan"
)

var (
	sharedOnce sync.Once
	shared     *gpu
	sharedErr  error
)

// TestMain closes the device the tests share: opening one per test would
// compile every pipeline again (seconds each on llvmpipe).
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared test device:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testDevice returns the shared default device, skipping only when no
// Vulkan device exists at all.
func testDevice(t testing.TB) *gpu {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = openGPU(-1) })
	if errors.Is(sharedErr, vulkan.ErrNoVulkan) {
		t.Skipf("no Vulkan device: %v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatalf("opening the Vulkan device: %v", sharedErr)
	}
	return shared
}

var allTypes = []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K}

// randomWeights returns rows × cols of type t: quantized from random floats
// where runtime/quant has a quantizer, otherwise random block bytes with
// their f16 scale fields set to plausible values.
func randomWeights(t testing.TB, typ ggml.Type, rows, cols int, rng *rand.Rand) []byte {
	t.Helper()
	if _, err := quant.Quantize(typ, make([]float32, typ.BlockElems())); err == nil {
		src := make([]float32, rows*cols)
		for i := range src {
			src[i] = float32(rng.NormFloat64() * 0.5)
		}
		b, err := quant.Quantize(typ, src)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rb, _ := typ.RowBytes(uint64(cols))
	b := make([]byte, rb*uint64(rows))
	rng.Read(b)
	bb := int(typ.BlockBytes())
	half := func(blk []byte, off int, v float64) {
		binary.LittleEndian.PutUint16(blk[off:], quant.FP32ToFP16(float32(v)))
	}
	for o := 0; o < len(b); o += bb {
		blk := b[o : o+bb]
		s := 0.001 + 0.01*rng.Float64()
		switch typ {
		case ggml.Q2_K:
			half(blk, 80, s)
			half(blk, 82, s)
		case ggml.Q3_K:
			half(blk, 108, s)
		case ggml.Q4_K, ggml.Q5_K:
			half(blk, 0, s)
			half(blk, 2, s)
		case ggml.Q6_K:
			half(blk, 208, s)
		default:
			t.Fatalf("no random generator for %s", typ)
		}
	}
	return b
}

func randomVec(n int, rng *rand.Rand) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// nmse is Σ(a-b)²/Σa² over the reference a; any NaN or Inf in b gives +Inf.
func nmse(ref, got []float32) float64 {
	var num, den float64
	for i := range ref {
		if math.IsNaN(float64(got[i])) || math.IsInf(float64(got[i]), 0) {
			return math.Inf(1)
		}
		e := float64(ref[i]) - float64(got[i])
		num += e * e
		den += float64(ref[i]) * float64(ref[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// f16bytes is v rounded to F16, little-endian, as an F16 cache stores it.
func f16bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], quant.FP32ToFP16(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// sentinel marks memory a kernel must not write.
var sentinel = math.Float32frombits(0x7fc0dead)

func isSentinel(v float32) bool { return math.Float32bits(v) == 0x7fc0dead }

func sqrt(x float64) float64 { return math.Sqrt(x) }

// newTestBackend builds a backend for a model loaded (or assembled) as the
// engine does: its plan resolved for the options' context.
func newTestBackend(d *gpu, m *arch.Model, opts backend.Options, profile, shared bool) (*Backend, error) {
	p, err := plan.Resolve(m, opts.ContextSize)
	if err != nil {
		return nil, err
	}
	return newBackendOn(d, p, opts, profile, shared)
}

// tableFor is the rope table of r as a plan resolves it for a context of
// ctx.
func tableFor(r arch.Rope, ctx int) ropeTable {
	return tableOf(plan.Rotation{Dims: r.Dims, NeoX: r.NeoX, Base: r.Base, Scale: one(r.Scale), AttnFactor: one(r.AttnFactor), Factors: r.Factors(ctx), YaRN: r.YaRN})
}

// one is x, or 1 where a Config built by hand leaves it unset.
func one(x float32) float32 {
	if x == 0 {
		return 1
	}
	return x
}

// mustPlan resolves m's plan for ctx positions.
func mustPlan(t testing.TB, m *arch.Model, ctx int) *plan.Plan {
	t.Helper()
	p, err := plan.Resolve(m, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
