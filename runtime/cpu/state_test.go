package cpu

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/backend"
)

// A hybrid model's state cannot be cut back like a KV cache: Checkpoint,
// Forward further, Rewind and feed the tokens after the checkpoint again
// must give the very logits (bit for bit) of a straight run, for dense
// and MoE qwen35 and for checkpoints taken after a batch and after single
// decode steps.
func TestCheckpointRewindBitIdentical(t *testing.T) {
	for _, name := range []string{"2026/synth-qwen35-F32.gguf", "2026/synth-qwen35moe-Q4_K_M.gguf"} {
		t.Run(name, func(t *testing.T) {
			m := loadShared(t, name)
			ctx := context.Background()
			tokens := make([]int32, 40)
			for i := range tokens {
				tokens[i] = int32((i*37 + 11) % m.Vocab)
			}
			straight, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer straight.Close()
			want, err := straight.Forward(ctx, tokens, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			v := m.Vocab
			// prefill 20, checkpoint; decode 5 one by one, checkpointing at 22
			if _, err := b.Forward(ctx, tokens[:20], 0, false); err != nil {
				t.Fatal(err)
			}
			b.Checkpoint()
			for p := 20; p < 25; p++ {
				if _, err := b.Forward(ctx, tokens[p:p+1], p, false); err != nil {
					t.Fatal(err)
				}
				if p == 21 {
					b.Checkpoint()
				}
			}
			if got := b.Checkpoints(); !slices.Equal(got, []int{20, 22}) {
				t.Fatalf("checkpoints %v, want [20 22]", got)
			}
			if mem := b.Memory(); mem.CheckpointBytes != 2*m.StateBytes() || mem.StateBytes != m.StateBytes() || mem.StateBytes == 0 {
				t.Errorf("memory: state %d, checkpoints %d; want %d and twice that", mem.StateBytes, mem.CheckpointBytes, m.StateBytes())
			}
			// going back to 21 restores the checkpoint at 20 and drops the one at 22
			at := b.Rewind(21)
			if at != 20 || !slices.Equal(b.Checkpoints(), []int{20}) {
				t.Fatalf("Rewind(21) = %d with checkpoints %v; want 20 with [20]", at, b.Checkpoints())
			}
			// a Forward that does not continue the state is refused
			if _, err := b.Forward(ctx, tokens[21:22], 21, false); err == nil || !strings.Contains(err.Error(), "recurrent state is at position 20") {
				t.Fatalf("Forward at 21 after rewinding to 20: %v", err)
			}
			got, err := b.Forward(ctx, tokens[20:], 20, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[20*v:]) {
				t.Fatalf("after rewind: logits differ from a straight run by up to %g", maxDiff(got, want[20*v:]))
			}
			// and back to the empty state
			if at := b.Rewind(10); at != 0 || len(b.Checkpoints()) != 0 {
				t.Fatalf("Rewind(10) = %d with checkpoints %v; want 0 with none", at, b.Checkpoints())
			}
			got, err = b.Forward(ctx, tokens[:1], 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[:v]) {
				t.Fatalf("from the empty state: logits differ by up to %g", maxDiff(got, want[:v]))
			}
		})
	}
}

// The oldest checkpoint goes when the backend holds its limit.
func TestCheckpointLimit(t *testing.T) {
	m := loadShared(t, "2026/synth-qwen35-F32.gguf")
	b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for p := 0; p < MaxCheckpoints+3; p++ {
		if _, err := b.Forward(context.Background(), []int32{int32(p + 1)}, p, false); err != nil {
			t.Fatal(err)
		}
		b.Checkpoint()
	}
	cps := b.Checkpoints()
	if len(cps) != MaxCheckpoints || cps[0] != 4 || cps[len(cps)-1] != MaxCheckpoints+3 {
		t.Fatalf("checkpoints %v: want the last %d, 4..%d", cps, MaxCheckpoints, MaxCheckpoints+3)
	}
}

// The DeltaNet ops against their definitions in float64.
func TestDeltaNetOps(t *testing.T) {
	t.Run("l2norm", func(t *testing.T) {
		x := []float32{3, -4, 12}
		l2Norm(x, 1e-6)
		for i, want := range []float64{3.0 / 13, -4.0 / 13, 12.0 / 13} {
			if math.Abs(float64(x[i])-want) > 1e-7 {
				t.Errorf("l2norm[%d] = %g, want %g", i, x[i], want)
			}
		}
		z := []float32{0, 0}
		l2Norm(z, 1e-6) // max(‖x‖, eps): no division by zero
		if z[0] != 0 || z[1] != 0 {
			t.Errorf("l2norm of zeros = %v", z)
		}
	})
	t.Run("softplus", func(t *testing.T) {
		for _, x := range []float32{-30, -1, 0, 2.5, 19.9, 25} {
			want := math.Log1p(math.Exp(float64(x)))
			if got := softplus(x); math.Abs(float64(got)-want) > 1e-6*math.Max(1, want) {
				t.Errorf("softplus(%g) = %g, want %g", x, got, want)
			}
		}
	})
	t.Run("conv", func(t *testing.T) {
		// 2 channels, kernel 3: state holds 2 past inputs per channel
		state := []float32{1, 10, 2, 20} // oldest first: (1,10), then (2,20)
		w := []float32{0.5, -1, 2, 1, 1, 1}
		out := make([]float32, 2)
		causalConv(out, state, []float32{3, 30}, w, 3)
		if want := []float32{0.5*1 - 1*2 + 2*3, 10 + 20 + 30}; !slices.Equal(out, want) {
			t.Errorf("conv = %v, want %v", out, want)
		}
		if want := []float32{2, 20, 3, 30}; !slices.Equal(state, want) {
			t.Errorf("state after = %v, want %v", state, want)
		}
	})
	t.Run("delta", func(t *testing.T) {
		const S = 4
		m := make([]float32, S*S)
		ref := make([]float64, S*S) // S[i][j], untransposed
		for i := range m {
			m[i] = float32(math.Sin(float64(i)))
		}
		for j := 0; j < S; j++ {
			for i := 0; i < S; i++ {
				ref[i*S+j] = float64(m[j*S+i])
			}
		}
		q := []float32{0.5, -0.5, 0.5, 0.5}
		k := []float32{0.1, 0.7, -0.7, 0.1}
		v := []float32{1, -2, 3, 0.5}
		g, beta := float32(-0.3), float32(0.8)
		o := make([]float32, S)
		deltaStep(m, q, k, v, o, g, beta)
		decay := math.Exp(float64(g))
		for i := range ref {
			ref[i] *= decay
		}
		for j := 0; j < S; j++ {
			var sk float64
			for i := 0; i < S; i++ {
				sk += ref[i*S+j] * float64(k[i])
			}
			d := float64(beta) * (float64(v[j]) - sk)
			for i := 0; i < S; i++ {
				ref[i*S+j] += float64(k[i]) * d
			}
		}
		for j := 0; j < S; j++ {
			var want float64
			for i := 0; i < S; i++ {
				want += ref[i*S+j] * float64(q[i])
			}
			want /= math.Sqrt(S)
			if math.Abs(float64(o[j])-want) > 1e-5 {
				t.Errorf("o[%d] = %g, want %g", j, o[j], want)
			}
		}
	})
}

// The native delta step (runtime/simd) computes the portable one's bits,
// for state sizes with and without a tail past the vector width.
func TestDeltaStepNativeMatchesPortable(t *testing.T) {
	for _, S := range []int{8, 13, 32, 128} {
		m := make([]float32, S*S)
		q, k, v := make([]float32, S), make([]float32, S), make([]float32, S)
		for i := range m {
			m[i] = float32(math.Sin(float64(i)*0.7)) * 0.3
		}
		for i := range q {
			q[i], k[i], v[i] = float32(math.Cos(float64(i)))/5, float32(math.Sin(float64(3*i+1)))/5, float32(i%5)-2
		}
		m2 := slices.Clone(m)
		o, o2 := make([]float32, S), make([]float32, S)
		for step := 0; step < 3; step++ {
			deltaStep(m, q, k, v, o, -0.05, 0.7)
			nativeDelta = false
			deltaStep(m2, q, k, v, o2, -0.05, 0.7)
			nativeDelta = true
			if !slices.Equal(o, o2) || !slices.Equal(m, m2) {
				t.Fatalf("S %d step %d: native and portable differ (outputs by up to %g, state by up to %g)", S, step, maxDiff(o, o2), maxDiff(m, m2))
			}
		}
	}
}
