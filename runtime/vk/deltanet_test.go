package vk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"

	"vkchat/runtime/vk/vulkan"
)

// hostFloats is a host-visible buffer holding v (at least 16 bytes).
func hostFloats(t *testing.T, d *gpu, name string, v []float32) *vulkan.Buffer {
	t.Helper()
	b, err := d.NewBuffer(name, uint64(max(16, 4*len(v))), vulkan.MemHost)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	copy(b.Mapped(), f32bytes(v))
	return b
}

func readFloats(b *vulkan.Buffer, n int) []float32 { return bytesF32(slices.Clone(b.Mapped()[:4*n])) }

func dnStep(t *testing.T, d *gpu, ntok int) *vulkan.Buffer {
	t.Helper()
	s := hostFloats(t, d, "step", make([]float32, 4))
	binary.LittleEndian.PutUint32(s.Mapped(), uint32(ntok))
	return s
}

func silu64(x float64) float64 { return x / (1 + math.Exp(-x)) }

// closeTo fails on the first element of got further than tol (relative to
// max(1, |want|)) from want.
func closeTo(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol*math.Max(1, math.Abs(want[i])) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d] = %g, want %g (|Δ| %.2g)", what, i, got[i], want[i], d)
		}
	}
}

// dn_conv: per channel, token by token, silu(Σ taps · [state ‖ x]) against
// the definition in float64, and the state left holding the last K−1
// inputs; for several kernel sizes, prefill and decode.
func TestDeltaNetConvKernel(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(7))
	for _, c := range []struct{ C, K, ntok int }{{37, 4, 5}, {130, 2, 3}, {64, 8, 1}, {256, 4, 64}} {
		t.Run(fmt.Sprintf("C%d/K%d/n%d", c.C, c.K, c.ntok), func(t *testing.T) {
			stride := c.C + 3
			in, w, st := randomVec(c.ntok*stride, rng), randomVec(c.C*c.K, rng), randomVec((c.K-1)*c.C, rng)
			bin, bw, bst := hostFloats(t, d, "in", in), hostFloats(t, d, "w", w), hostFloats(t, d, "state", st)
			bout := hostFloats(t, d, "out", make([]float32, c.ntok*stride))
			k, err := d.kernel("dn_conv", 3*4, 64)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return r.Dispatch("conv", k, []vulkan.Arg{vulkan.R(dnStep(t, d, c.ntok)), vulkan.R(bin), vulkan.R(bw), vulkan.W(bst), vulkan.W(bout)},
					[]uint32{uint32(c.C), uint32(c.K), uint32(stride)}, uint32((c.C+63)/64), 1, 1)
			})
			got, gotState := readFloats(bout, c.ntok*stride), readFloats(bst, (c.K-1)*c.C)
			for ch := 0; ch < c.C; ch++ {
				win := make([]float64, 0, c.K-1+c.ntok)
				for i := 0; i < c.K-1; i++ {
					win = append(win, float64(st[i*c.C+ch]))
				}
				for tk := 0; tk < c.ntok; tk++ {
					win = append(win, float64(in[tk*stride+ch]))
					var s float64
					for i := 0; i < c.K; i++ {
						s += float64(w[ch*c.K+i]) * win[tk+i]
					}
					closeTo(t, fmt.Sprintf("channel %d token %d", ch, tk), got[tk*stride+ch:], []float64{silu64(s)}, 1e-5)
				}
				for i := 0; i < c.K-1; i++ {
					if want := float32(win[len(win)-(c.K-1)+i]); gotState[i*c.C+ch] != want {
						t.Fatalf("state[%d][%d] = %g, want the input %g", i, ch, gotState[i*c.C+ch], want)
					}
				}
			}
		})
	}
}

// deltaRef is one DeltaNet layer's recurrence in float64 from its
// definition (../shared/docs/architectures-2026.md §1): q and k
// L2-normalized, per value head h (key head h mod H_k) S·e^g, δ = β(v −
// Sᵀk), S += k⊗δ, o = Sᵀq/√S; then rms(o)·w·silu(z). mat is [h][i][j] =
// S[i][j], updated in place.
func deltaRef(S, hk, hv, ntok int, conv, beta, alpha, z, dt, a, nw []float32, cstride, bstride, zstride int, eps float64, mat []float64) [][]float64 {
	l2 := func(x []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		n := math.Max(math.Sqrt(ss), eps)
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(v) / n
		}
		return out
	}
	var outs [][]float64
	for t := 0; t < ntok; t++ {
		row := conv[t*cstride:]
		o := make([]float64, hv*S)
		for h := 0; h < hv; h++ {
			kh := h % hk
			q, k := l2(row[kh*S:(kh+1)*S]), l2(row[hk*S+kh*S:hk*S+(kh+1)*S])
			v := row[2*hk*S+h*S:]
			b := 1 / (1 + math.Exp(-float64(beta[t*bstride+h])))
			x := float64(alpha[t*bstride+h] + dt[h])
			g := math.Log1p(math.Exp(x)) * float64(a[h])
			m := mat[h*S*S : (h+1)*S*S]
			for i := range m {
				m[i] *= math.Exp(g)
			}
			for j := 0; j < S; j++ {
				var sk float64
				for i := 0; i < S; i++ {
					sk += m[i*S+j] * k[i]
				}
				dj := b * (float64(v[j]) - sk)
				for i := 0; i < S; i++ {
					m[i*S+j] += k[i] * dj
				}
			}
			var ss float64
			for j := 0; j < S; j++ {
				var oj float64
				for i := 0; i < S; i++ {
					oj += m[i*S+j] * q[i]
				}
				o[h*S+j] = oj / math.Sqrt(float64(S))
				ss += o[h*S+j] * o[h*S+j]
			}
			r := 1 / math.Sqrt(ss/float64(S)+eps)
			for j := 0; j < S; j++ {
				o[h*S+j] = o[h*S+j] * r * float64(nw[j]) * silu64(float64(z[t*zstride+h*S+j]))
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// dn_delta: the L2 norm of q and k (inputs scaled up 40× must give the
// same output), the delta rule over several tokens with value heads
// sharing key heads (h mod H_k), the decay, and the gated RMS norm (a large
// z, a small output), against deltaRef; the state written back is the
// reference's.
func TestDeltaNetDeltaKernel(t *testing.T) {
	d := testDevice(t)
	for _, c := range []struct {
		name                string
		S, hk, hv, ntok     int
		qkScale, zScale, oS float32
	}{
		{"l2 norm of large q and k", 32, 2, 4, 3, 40, 1, 1},
		{"delta rule, 4 value heads on 2 key heads", 32, 2, 4, 9, 1, 1, 1},
		{"one token, decode", 16, 1, 2, 1, 1, 1, 1},
		{"gated norm, large z and tiny values", 32, 2, 2, 4, 1, 8, 1e-3},
		{"state of 128", 128, 1, 1, 2, 1, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(c.S + c.ntok)))
			S := c.S
			C := (2*c.hk + c.hv) * S
			vw := c.hv * S
			cstride, bstride, zstride, ostride := C+4, c.hv+4, vw+4, vw+8
			conv := randomVec(c.ntok*cstride, rng)
			for tk := 0; tk < c.ntok; tk++ {
				for i := 0; i < 2*c.hk*S; i++ {
					conv[tk*cstride+i] *= c.qkScale
				}
				for i := 2 * c.hk * S; i < C; i++ {
					conv[tk*cstride+i] *= c.oS
				}
			}
			beta, alpha := randomVec(c.ntok*bstride, rng), randomVec(c.ntok*bstride, rng)
			z := randomVec(c.ntok*zstride, rng)
			for i := range z {
				z[i] *= c.zScale
			}
			dt, a, nw := randomVec(c.hv, rng), randomVec(c.hv, rng), randomVec(S, rng)
			for i := range a {
				a[i] = -float32(math.Abs(float64(a[i]))) // −exp(A_log) ≤ 0
			}
			mat := randomVec(c.hv*S*S, rng)
			// the kernel's state is transposed: row j of head h holds column j
			ref := make([]float64, len(mat))
			for h := 0; h < c.hv; h++ {
				for j := 0; j < S; j++ {
					for i := 0; i < S; i++ {
						ref[h*S*S+i*S+j] = float64(mat[h*S*S+j*S+i])
					}
				}
			}
			const eps = 1e-6
			want := deltaRef(S, c.hk, c.hv, c.ntok, conv, beta, alpha, z, dt, a, nw, cstride, bstride, zstride, eps, ref)
			params := append(append(append([]float32(nil), dt...), a...), nw...)
			bm, bo := hostFloats(t, d, "state", mat), hostFloats(t, d, "out", make([]float32, c.ntok*ostride))
			k, err := d.kernel("dn_delta", 8*4, uint32(S), uint32(S))
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return r.Dispatch("delta", k, []vulkan.Arg{vulkan.R(dnStep(t, d, c.ntok)), vulkan.R(hostFloats(t, d, "conv", conv)),
					vulkan.R(hostFloats(t, d, "beta", beta)), vulkan.R(hostFloats(t, d, "alpha", alpha)), vulkan.R(hostFloats(t, d, "z", z)),
					vulkan.R(hostFloats(t, d, "params", params)), vulkan.W(bm), vulkan.W(bo)},
					[]uint32{uint32(c.hk), uint32(c.hv), uint32(cstride), uint32(bstride), uint32(zstride), uint32(ostride),
						math.Float32bits(eps), math.Float32bits(1 / float32(math.Sqrt(float64(S))))}, uint32(c.hv), 1, 1)
			})
			got := readFloats(bo, c.ntok*ostride)
			for tk := range want {
				closeTo(t, fmt.Sprintf("token %d out", tk), got[tk*ostride:], want[tk], 2e-4)
			}
			gotM := readFloats(bm, len(mat))
			for h := 0; h < c.hv; h++ {
				for j := 0; j < S; j++ {
					for i := 0; i < S; i++ {
						if g, w := float64(gotM[h*S*S+j*S+i]), ref[h*S*S+i*S+j]; math.Abs(g-w) > 1e-4*math.Max(1, math.Abs(w)) {
							t.Fatalf("state head %d S[%d][%d] = %g, want %g", h, i, j, g, w)
						}
					}
				}
			}
		})
	}
}

// dn_gate multiplies by σ(gate); dn_shared adds y·σ(s[t]) to x; both only
// for the step's tokens.
func TestDeltaNetGateKernels(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(5))
	const n, stride, cap, ntok = 100, 104, 4, 3
	att, gate := randomVec(cap*stride, rng), randomVec(cap*stride, rng)
	batt := hostFloats(t, d, "att", att)
	k, err := d.kernel("dn_gate", 2*4, 64)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		return r.Dispatch("gate", k, []vulkan.Arg{vulkan.R(dnStep(t, d, ntok)), vulkan.W(batt), vulkan.R(hostFloats(t, d, "gate", gate))},
			[]uint32{n, stride}, 2, cap, 1)
	})
	got := readFloats(batt, cap*stride)
	for i := range got {
		want := float64(att[i])
		if i/stride < ntok && i%stride < n {
			want *= 1 / (1 + math.Exp(-float64(gate[i])))
		}
		closeTo(t, "gated attention", got[i:], []float64{want}, 1e-6)
	}
	x, y, s := randomVec(cap*stride, rng), randomVec(cap*stride, rng), randomVec(cap*2, rng)
	bx := hostFloats(t, d, "x", x)
	if k, err = d.kernel("dn_shared", 3*4, 64); err != nil {
		t.Fatal(err)
	}
	runOnce(t, d, func(r *vulkan.Recorder) error {
		return r.Dispatch("shared", k, []vulkan.Arg{vulkan.R(dnStep(t, d, ntok)), vulkan.W(bx), vulkan.R(hostFloats(t, d, "y", y)), vulkan.R(hostFloats(t, d, "s", s))},
			[]uint32{n, stride, 2}, 2, cap, 1)
	})
	got = readFloats(bx, cap*stride)
	for i := range got {
		want := float64(x[i])
		if tk := i / stride; tk < ntok && i%stride < n {
			want += float64(y[i]) / (1 + math.Exp(-float64(s[2*tk])))
		}
		closeTo(t, "x plus the shared expert", got[i:], []float64{want}, 1e-6)
	}
}

// On the device too: Checkpoint, decode further, Rewind and decode the same
// tokens again gives the same logits bit for bit (the same command buffers
// over the restored state); a Forward off the state's position is refused.
func TestVulkanCheckpointRewind(t *testing.T) {
	m := loadModel(t, testenv.Model(t, "2026/synth-qwen35-F32.gguf"))
	b, err := newTestBackend(testDevice(t), m, backend.Options{ContextSize: 64, Device: -1}, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	tokens := make([]int32, 26)
	for i := range tokens {
		tokens[i] = int32((i*53 + 7) % m.Vocab)
	}
	if _, err := b.Forward(ctx, tokens[:20], 0, false); err != nil {
		t.Fatal(err)
	}
	b.Checkpoint()
	decode := func() [][]float32 {
		var out [][]float32
		for p := 20; p < 26; p++ {
			lg, err := b.Forward(ctx, tokens[p:p+1], p, false)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, lg)
		}
		return out
	}
	first := decode()
	if mem := b.Memory(); mem.CheckpointBytes != m.StateBytes() || mem.StateBytes != m.StateBytes() || mem.KVAllocated != m.KVBytes(64, 2) {
		t.Errorf("memory: state %d, checkpoints %d, KV %d; want %d, %d, %d", mem.StateBytes, mem.CheckpointBytes, mem.KVAllocated, m.StateBytes(), m.StateBytes(), m.KVBytes(64, 2))
	}
	if _, err := b.Forward(ctx, tokens[22:23], 22, false); err == nil || !strings.Contains(err.Error(), "recurrent state is at position 26") {
		t.Fatalf("Forward at 22 with the state at 26: %v", err)
	}
	if at := b.Rewind(23); at != 20 || !slices.Equal(b.Checkpoints(), []int{20}) {
		t.Fatalf("Rewind(23) = %d, checkpoints %v; want 20, [20]", at, b.Checkpoints())
	}
	again := decode()
	for i := range first {
		if !slices.Equal(first[i], again[i]) {
			t.Fatalf("position %d after the rewind: logits differ", 20+i)
		}
	}
}

// DeltaNet shapes past what the kernels hold are refused by name (the CPU
// backend runs them).
func TestDeltaNetShapesRefused(t *testing.T) {
	m := loadModel(t, testenv.Model(t, "2026/synth-qwen35-F32.gguf"))
	m.DeltaNet.ConvKernel, m.DeltaNet.StateSize = 9, 512
	_, err := check(mustPlan(t, m, 64), backend.Options{ContextSize: 64})
	if !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("error %v, want ErrUnsupported", err)
	}
	for _, want := range []string{"conv of 9 taps", "state of 512", "--backend cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
