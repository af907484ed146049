package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"vkchat/runtime/arch"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// TestSSMScanNativeMatchesPortable: runtime/simd's Mamba2 scan of one head
// leaves the same state and outputs as scanRow, bit for bit, for state
// sizes with and without a whole 32-lane part and a tail, over several
// tokens.
func TestSSMScanNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := func() float32 { return float32(rng.NormFloat64()) }
	for _, N := range []int{16, 32, 40, 64, 128, 131} {
		const P = 24
		native, portable := make([]float32, P*N), make([]float32, P*N)
		for i := range native {
			native[i] = r()
		}
		copy(portable, native)
		x, B, C := make([]float32, P), make([]float32, N), make([]float32, N)
		yn, yp := make([]float32, P), make([]float32, P)
		for tok := 0; tok < 5; tok++ {
			for i := range x {
				x[i] = r()
			}
			for i := range B {
				B[i], C[i] = r(), r()
			}
			dt := softplus1p(r() - 2)
			dA := float32(math.Exp(float64(dt * -float32(0.5+rng.Float64()))))
			if !simd.SSMScanHead(native, x, B, C, yn, dA, dt) {
				t.Fatal("native scan unavailable")
			}
			for p := 0; p < P; p++ {
				yp[p] = scanRow(portable[p*N:(p+1)*N], B, C, dA, x[p]*dt)
			}
			for p := range yp {
				if math.Float32bits(yn[p]) != math.Float32bits(yp[p]) {
					t.Fatalf("N %d token %d row %d: native %g, portable %g", N, tok, p, yn[p], yp[p])
				}
			}
			for i := range native {
				if math.Float32bits(native[i]) != math.Float32bits(portable[i]) {
					t.Fatalf("N %d token %d: state %d native %g, portable %g", N, tok, i, native[i], portable[i])
				}
			}
		}
	}
}

// TestConvStepMatchesPortable: the native conv step gives the portable
// causalConv's outputs and states bit for bit over several tokens, for
// channel counts with and without a tail past the 8-wide vectors, kernel
// sizes 2 to 4, and values with signed zeros and products that cancel.
func TestConvStepMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(51, 52))
	val := func() float32 {
		switch r.IntN(8) {
		case 0:
			return 0
		case 1:
			return float32(math.Copysign(0, -1))
		case 2:
			return 1e-30
		}
		return float32(r.NormFloat64())
	}
	for _, K := range []int{2, 3, 4} {
		for _, C := range []int{1, 7, 8, 9, 4099} {
			taps := make([]float32, C*K)
			for i := range taps {
				taps[i] = val()
			}
			tapsT := tapMajor(taps, K)
			native, portable := make([]float32, (K-1)*C), make([]float32, (K-1)*C)
			for i := range native {
				native[i] = val()
			}
			copy(portable, native)
			for tok := 0; tok < 5; tok++ {
				in := make([]float32, C)
				for i := range in {
					in[i] = val()
				}
				outN, outP := make([]float32, C), make([]float32, C)
				convStep(outN, native, in, taps, tapsT, K)
				nativeConv = false
				convStep(outP, portable, in, taps, tapsT, K)
				nativeConv = true
				for c := range outN {
					if math.Float32bits(outN[c]) != math.Float32bits(outP[c]) {
						t.Fatalf("K %d, C %d, token %d, channel %d: native %g (%#x), portable %g (%#x)", K, C, tok, c, outN[c], math.Float32bits(outN[c]), outP[c], math.Float32bits(outP[c]))
					}
				}
				for i := range native {
					if math.Float32bits(native[i]) != math.Float32bits(portable[i]) {
						t.Fatalf("K %d, C %d, token %d: state %d native %g, portable %g", K, C, tok, i, native[i], portable[i])
					}
				}
			}
		}
	}
}

// BenchmarkMamba2ConvSiLU measures the Mamba2 op on the nemotron_h_moe
// bench shape with the conv and SiLUs on the native kernels and on the
// portable loops (as they ran before the native ones), alternating every
// round in one process so that a shared machine's drift hits both: per
// round, 16 decode steps and a prefill chunk of 64 tokens in each mode.
// It reports the op's time per layer and token of each.
func BenchmarkMamba2ConvSiLU(b *testing.B) {
	m := loadSynth(b, synth.Shapes["nemotron_h_moe"], synth.Options{Arch: "nemotron_h_moe", Type: ggml.Q4_0, Seed: 1})
	be, err := newFor(m, backend.Options{ContextSize: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	layers := 0
	for i := range m.Layers {
		if m.Layers[i].Config.Kind == arch.KindMamba2 {
			layers++
		}
	}
	ctx := context.Background()
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(1 + (i*7919)%(m.Vocab-1))
	}
	var decode, prefill [2]time.Duration // [portable, native]
	mamba := func() time.Duration {
		for _, o := range be.OpTimes() {
			if o.Op == "mamba2" {
				return o.Time
			}
		}
		b.Fatal("no mamba2 op timed")
		return 0
	}
	defer func() { nativeConv, nativeSwiGLU = true, true }()
	for r := 0; r <= b.N; r++ { // round 0 warms up (expert packs)
		for mode := range 2 {
			nativeConv, nativeSwiGLU = mode == 1, mode == 1
			be.TimeOps(true)
			for i := 0; i < 16; i++ {
				if _, err := be.Forward(ctx, prompt[i:i+1], i, false); err != nil {
					b.Fatal(err)
				}
			}
			d := mamba()
			be.TimeOps(true)
			if _, err := be.Forward(ctx, prompt, 0, false); err != nil {
				b.Fatal(err)
			}
			if r > 0 {
				decode[mode] += d
				prefill[mode] += mamba()
			}
		}
	}
	be.TimeOps(false)
	per := func(d time.Duration, tokens int) float64 {
		return float64(d.Microseconds()) / float64(b.N*tokens*layers)
	}
	b.ReportMetric(per(decode[0], 16), "portable-decode-us/layer")
	b.ReportMetric(per(decode[1], 16), "native-decode-us/layer")
	b.ReportMetric(per(prefill[0], 64), "portable-prefill-us/layer/token")
	b.ReportMetric(per(prefill[1], 64), "native-prefill-us/layer/token")
}
