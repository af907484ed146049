package cpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/simd"
)

// TestMLAPathsAgree: deepseek2's latent attention gives the same bits
// whichever way the work runs — split by query head over the F16 cache
// in place (the default with native kernels), by its one KV head (one
// worker for all heads), or the portable loops over the widened rows —
// through a prefill, decode steps and a rewind.
func TestMLAPathsAgree(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	m := loadShared(t, "2026b/synth-deepseek2-F32.gguf")
	const ctx, n, prefill = 64, 30, 12
	tokens := make([]int32, n)
	for i := range tokens {
		tokens[i] = int32((i*37 + 11) % m.Vocab)
	}
	run := func(native, byQuery bool) [][]float32 {
		nativeAttention = native
		defer func() { nativeAttention = true }()
		b, err := newFor(m, backend.Options{ContextSize: ctx, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if b.s.mqaQH == nil {
			t.Fatal("no per-query-head scratch for an MLA model")
		}
		if !byQuery {
			b.s.mqaQH = nil
		}
		bg := context.Background()
		lg, err := b.Forward(bg, tokens[:prefill], 0, true)
		if err != nil {
			t.Fatal(err)
		}
		out := [][]float32{lg}
		for i := prefill; i < n; i++ {
			lg, err := b.Forward(bg, tokens[i:i+1], i, false)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]float32(nil), lg...))
		}
		lg, err = b.Forward(bg, tokens[n-5:], n-5, true)
		if err != nil {
			t.Fatal(err)
		}
		return append(out, lg)
	}
	want := run(true, true)
	// the rewind re-reads positions n-5.. over rows the cache already
	// holds: as a fresh prefill of all n computes them
	fresh, err := newFor(m, backend.Options{ContextSize: ctx, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	all, err := fresh.Forward(context.Background(), tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	rewound := want[len(want)-1]
	for i, x := range all[(n-5)*m.Vocab:] {
		if math.Float32bits(x) != math.Float32bits(rewound[i]) {
			t.Fatalf("rewind: logit %d of the last 5 positions is %g, a fresh prefill %g", i, rewound[i], x)
		}
	}
	for _, c := range []struct {
		name            string
		native, byQuery bool
	}{{"by KV head", true, false}, {"portable", false, false}} {
		got := run(c.native, c.byQuery)
		for s := range want {
			for i := range want[s] {
				if math.Float32bits(got[s][i]) != math.Float32bits(want[s][i]) {
					t.Fatalf("%s: call %d logit %d: %g, split by query head %g", c.name, s, i, got[s][i], want[s][i])
				}
			}
		}
	}
}

// TestMLADirectQuery: a file without the query's low-rank pair
// (DeepSeek-V2-Lite: q_lora_rank 0 and attn_q; here attn_q_b · attn_q_a,
// the pair without its norm, so that the query keeps its size) loads with
// a direct query and runs to finite logits. No llama.cpp reference covers
// this form.
func TestMLADirectQuery(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-deepseek2-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := fromgguf.Spec(f)
	const embd, qLora, qw = 256, 96, 4 * 48
	for il := 0; il < 4; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		qa, qb := s.Tensor(p+"attn_q_a.weight"), s.Tensor(p+"attn_q_b.weight")
		a, b := f32sOf(qa.Data), f32sOf(qb.Data)
		// attn_q = attn_q_b · attn_q_a: row r, column c = Σ_j b[r][j]·a[j][c]
		q := make([]float32, qw*embd)
		for r := 0; r < qw; r++ {
			for j := 0; j < qLora; j++ {
				for c := 0; c < embd; c++ {
					q[r*embd+c] += b[r*qLora+j] * a[j*embd+c]
				}
			}
		}
		for _, n := range []string{"attn_q_a.weight", "attn_q_a_norm.weight", "attn_q_b.weight"} {
			s.DelTensor(p + n)
		}
		s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: p + "attn_q.weight", Type: ggml.F32, Dims: []uint64{embd, qw}, Data: bytesOf(q)})
	}
	s.Set("deepseek2.attention.q_lora_rank", uint32(0))
	data, err := s.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse("direct-q.gguf", data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := arch.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	if m.MLA.QLora != 0 || m.Layers[1].MLA.QA != nil || m.Layers[1].MLA.Q.Cols != embd {
		t.Fatalf("q_lora %d, QA %v, Q %d columns: want a direct attn_q", m.MLA.QLora, m.Layers[1].MLA.QA != nil, m.Layers[1].MLA.Q.Cols)
	}
	b, err := newFor(m, backend.Options{ContextSize: 32, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	logits, err := b.Forward(context.Background(), []int32{1, 403, 407, 261, 378, 432}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d is %g", i, v)
		}
	}
}

func f32sOf(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOf(x []float32) []byte {
	out := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// TestMLARouting: deepseek2's dense lead layer reports no experts, and
// each routed layer its 2 experts with weights renormalised and × 1.8.
func TestMLARouting(t *testing.T) {
	m := loadShared(t, "2026b/synth-deepseek2-F32.gguf")
	b, err := newFor(m, backend.Options{ContextSize: 16, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Forward(context.Background(), []int32{1, 403, 407}, 0, false); err != nil {
		t.Fatal(err)
	}
	r := b.LastRouting()
	if len(r) != 4 || len(r[0].Experts) != 0 {
		t.Fatalf("routing %+v: want 4 layers, none routed in layer 0", r)
	}
	for il, l := range r[1:] {
		if len(l.Experts) != 2 || l.Experts[0] == l.Experts[1] || math.Abs(float64(l.Weights[0]+l.Weights[1])-1.8) > 1e-5 {
			t.Errorf("layer %d: experts %v weights %v, want 2 distinct summing to 1.8", il+1, l.Experts, l.Weights)
		}
	}
}
