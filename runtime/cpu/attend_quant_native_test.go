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
		{backend.KVQ4_1, backend.KVQ4_1}, {backend.KVQ5_1, backend.KVQ5_1}, {backend.KVQ5_1, backend.KVQ4_1},
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

// TestKVCacheQuantRoundTrip: every block-quantized cache type stores a row
// as ggml's quantizer encodes it and gives back, for each head, the values
// its dequantizer decodes — within a code step of what was written (half
// a step but where q4_0/q5_0 clamp the code at the far end; a scale or
// minimum misplaced, or a head's blocks read from the wrong offset, is off
// by several steps).
func TestKVCacheQuantRoundTrip(t *testing.T) {
	m := loadShared(t, "synth-qwen3-F32.gguf")
	r := rand.New(rand.NewPCG(5, 6))
	for _, kt := range backend.KVTypes {
		if !kt.Quantized() {
			continue
		}
		b, err := newFor(m, backend.Options{ContextSize: 32, Threads: 1, KVType: kt})
		if err != nil {
			t.Fatalf("%s: %v", kt, err)
		}
		kv := b.kv
		width := kv.widths[0]
		hd := b.layers[0].att.HeadDim
		rows := make([][]float32, 5)
		for p := range rows {
			rows[p] = make([]float32, width)
			for i := range rows[p] {
				rows[p][i] = float32(r.NormFloat64()) + 0.5 // not centred: a minimum matters
			}
			kv.store(0, p, rows[p], rows[p])
		}
		keys, vals := make([]float32, len(rows)*hd), make([]float32, len(rows)*hd)
		for h := 0; h < width/hd; h++ {
			kv.load(0, h, hd, 0, len(rows), keys, vals)
			for p := range rows {
				x := rows[p][h*hd : (h+1)*hd]
				blocks := make([]byte, kt.RowBytes(hd))
				if err := quant.QuantizeRow(ggmlType(kt), x, blocks); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, hd)
				_ = quant.Dequantize(ggmlType(kt), blocks, want)
				for i := range want {
					if vals[p*hd+i] != want[i] {
						t.Fatalf("%s head %d position %d value %d: loaded %g, decoded %g", kt, h, p, i, vals[p*hd+i], want[i])
					}
				}
				for blk := 0; blk < hd/32; blk++ {
					lo, hi := x[blk*32], x[blk*32]
					for _, v := range x[blk*32 : (blk+1)*32] {
						lo, hi = min(lo, v), max(hi, v)
					}
					// iq4_nl: 16 steps of max/127 (half its table's widest
					// gap is 12, past its top 14, and the scale is refitted)
					levels := map[backend.KVType]float64{backend.KVQ8_0: 254, backend.KVQ5_0: 31, backend.KVQ5_1: 31, backend.KVQ4_0: 15, backend.KVQ4_1: 15, backend.KVIQ4_NL: 254.0 / 16}[kt]
					if levels == 0 {
						t.Fatalf("%s: no step bound for this type", kt)
					}
					step := 2 * math.Max(math.Abs(float64(lo)), math.Abs(float64(hi))) / levels
					if kt == backend.KVQ4_1 || kt == backend.KVQ5_1 {
						step = float64(hi-lo) / levels
					}
					for i := blk * 32; i < (blk+1)*32; i++ {
						if d := math.Abs(float64(want[i] - x[i])); d > step*1.001+1e-6 {
							t.Fatalf("%s head %d position %d value %d: %g decoded as %g, %.3g off (a step is %.3g)", kt, h, p, i, x[i], want[i], d, step)
						}
					}
				}
			}
		}
		b.Close()
	}
}

// TestAttnWorkBytesIsWhatNewMakes: the attention buffers ContextBytes (and
// so the engine's memory fit) counts are the ones New makes, for float and
// quantized caches, with the native kernels and without — a quantized
// cache read in place keeps only a batch's rows, the portable path widens
// the whole context.
func TestAttnWorkBytesIsWhatNewMakes(t *testing.T) {
	m := loadShared(t, "synth-qwen3-F32.gguf")
	for _, native := range []bool{true, false} {
		for _, pair := range [][2]backend.KVType{{backend.KVF16, backend.KVF16}, {backend.KVQ8_0, backend.KVQ8_0}, {backend.KVQ4_0, backend.KVF16}, {backend.KVF16, backend.KVQ5_1}} {
			nativeAttention = native
			b, err := newFor(m, backend.Options{ContextSize: 200, Threads: 1, KVType: pair[0], KVTypeV: pair[1]})
			nativeAttention = true
			if err != nil {
				t.Fatal(err)
			}
			var made int64
			for _, w := range b.attnWork {
				made += 4*int64(len(w.keys)+len(w.vals)+len(w.qh)+len(w.scores)) + int64(len(w.kq)+len(w.vq)+len(w.vbat))
			}
			nativeAttention = native
			counted := attnWorkBytes(b.plan.Widest, 200, pair[0], pair[1])
			nativeAttention = true
			if made != counted {
				t.Errorf("%s/%s native %v: New made %d bytes of attention buffers, attnWorkBytes counts %d", pair[0], pair[1], native, made, counted)
			}
			b.Close()
		}
	}
}
