package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// TestAttendQuantNativeMatchesPortable: attention over a quantized cache
// read in place by the native kernels (attendQuantNative) gives the same
// logits, bit for bit, as the portable path (attendQuantized: widened
// copies, RowDotter's Go dot, the online softmax in Go), for every cache
// type pair with a quantized K — a float V beside it too — on a plain
// llama stack, gemma3's sliding-window rings (decoded through several
// wraps), gemma2's soft-cap and gpt-oss's sinks and windows; a prefill
// batch (the batch's own rows from scratch), one-token steps after it,
// and a rewind.
func TestAttendQuantNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	pairs := [][2]backend.KVType{
		{backend.KVQ8_0, backend.KVQ8_0}, {backend.KVQ4_0, backend.KVQ4_0}, {backend.KVQ5_0, backend.KVQ5_0},
		{backend.KVQ8_0, backend.KVF16}, {backend.KVQ4_0, backend.KVF32}, {backend.KVQ5_0, backend.KVQ8_0},
	}
	models := []string{"synth-F32.gguf", "synth-gemma3-F32.gguf", "synth-gemma2-F32.gguf", "2026/synth-gpt-oss-F32.gguf"}
	if testing.Short() {
		models = models[1:2]
	}
	for _, name := range models {
		m := loadShared(t, name)
		const ctx, n, prefill = 64, 30, 12
		tokens := make([]int32, n)
		for i := range tokens {
			tokens[i] = int32((i*37 + 11) % m.Vocab)
		}
		for _, pair := range pairs {
			run := func(native bool) [][]float32 {
				nativeAttention = native
				defer func() { nativeAttention = true }()
				b, err := newFor(m, backend.Options{ContextSize: ctx, Threads: 2, KVType: pair[0], KVTypeV: pair[1]})
				if err != nil {
					t.Fatalf("%s %v: %v", name, pair, err)
				}
				defer b.Close()
				bg := context.Background()
				var out [][]float32
				lg, err := b.Forward(bg, tokens[:prefill], 0, true)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, lg)
				for i := prefill; i < n; i++ {
					lg, err := b.Forward(bg, tokens[i:i+1], i, false)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, append([]float32(nil), lg...))
				}
				lg, err = b.Forward(bg, tokens[n-5:], n-5, true) // a rewind, the ring still holding it
				if err != nil {
					t.Fatal(err)
				}
				return append(out, lg)
			}
			got, want := run(true), run(false)
			for s := range want {
				for i := range want[s] {
					if math.Float32bits(got[s][i]) != math.Float32bits(want[s][i]) {
						t.Fatalf("%s %s/%s: call %d logit %d: native %g, portable %g", name, pair[0], pair[1], s, i, got[s][i], want[s][i])
					}
				}
			}
		}
	}
}

// TestAttnValuesMatchesOnline: the native value kernel, for every value
// type it reads and head sizes of one to several 64-value chunks (and a
// 32-value tail), F16 and F32 accumulation, split into segments at
// arbitrary points (the state carried between calls), gives online.add's
// bits on the values widened by quant.Dequantize.
func TestAttnValuesMatchesOnline(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(43, 44))
	types := []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1}
	for _, vt := range types {
		for _, hd := range []int{32, 64, 96, 128, 256} {
			for _, f16 := range []bool{false, true} {
				const span = 75
				rb, _ := vt.RowBytes(uint64(hd))
				rowBytes := int(rb)
				const pad = 3 // rows a cache row apart: other heads between them
				stride := rowBytes * pad
				vals := make([]byte, span*stride)
				wide := make([]float32, span*hd)
				x := make([]float32, hd)
				for p := 0; p < span; p++ {
					for i := range x {
						x[i] = float32(r.NormFloat64()) * float32(1+p%5)
					}
					row := vals[p*stride+rowBytes : p*stride+2*rowBytes]
					if err := quant.QuantizeRow(vt, x, row); err != nil {
						t.Fatal(err)
					}
					if err := quant.Dequantize(vt, row, wide[p*hd:(p+1)*hd]); err != nil {
						t.Fatal(err)
					}
				}
				sc := make([]float32, span)
				for p := range sc {
					sc[p] = float32(r.NormFloat64()) * 3
					if p%17 == 9 {
						sc[p] += 8 // a new maximum mid-way: a rescale
					}
				}
				const scale = 0.7
				want := make([]float32, hd)
				acc := online{out: want, f16: f16}
				acc.start()
				for p := range sc {
					acc.add(sc[p]*scale, 0, wide[p*hd:(p+1)*hd])
				}
				got := make([]float32, hd)
				state := [2]float32{float32(math.Inf(-1)), 0}
				work, rescale := make([]float32, 3*span), make([]uint8, span)
				for _, cut := range [][2]int{{0, 1}, {1, 40}, {40, 41}, {41, span}} {
					if !simd.AttnValues(sc[cut[0]:cut[1]], scale, vals[cut[0]*stride+rowBytes:], int(vt), stride, got, f16, &state, work, rescale) {
						t.Fatalf("%v hd %d: no kernel", vt, hd)
					}
				}
				if state[0] != acc.m || state[1] != acc.sum {
					t.Fatalf("%v hd %d f16 %v: max, sum %g, %g; online %g, %g", vt, hd, f16, state[0], state[1], acc.m, acc.sum)
				}
				for d := range want {
					if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
						t.Fatalf("%v hd %d f16 %v: out[%d] native %g, online %g", vt, hd, f16, d, got[d], want[d])
					}
				}
			}
		}
	}
}
