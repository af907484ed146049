package vk

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
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

// kvBlockTypes are the block-quantized cache types and their ggml types.
var kvBlockTypes = []struct {
	kv backend.KVType
	g  ggml.Type
}{{backend.KVQ8_0, ggml.Q8_0}, {backend.KVQ4_0, ggml.Q4_0}, {backend.KVQ5_0, ggml.Q5_0}, {backend.KVQ4_1, ggml.Q4_1}, {backend.KVQ5_1, ggml.Q5_1}, {backend.KVIQ4_NL, ggml.IQ4_NL}}

// ggmlRow is row row of a cache buffer in kvquant.glsl's layout (words,
// rows rows of hd values of type t) as ggml's blocks of that type: the
// f16 scale (and minimum), the fifth bits, the codes, in block_q8_0 ...
// block_iq4_nl's byte order.
func ggmlRow(t backend.KVType, words []uint32, rows, row, hd int) []byte {
	nb := hd / 32
	cw := hd / 8
	switch t {
	case backend.KVQ8_0:
		cw = hd / 4
	case backend.KVQ5_0, backend.KVQ5_1:
		cw += nb
	}
	code := words[row*cw:]
	scales := words[rows*cw:]
	var out []byte
	for b := 0; b < nb; b++ {
		var dm [2]uint16
		if t == backend.KVQ4_1 || t == backend.KVQ5_1 {
			w := scales[row*nb+b]
			dm = [2]uint16{uint16(w), uint16(w >> 16)}
		} else {
			w := scales[row*((nb+1)/2)+b/2]
			dm[0] = uint16(w >> (16 * (b % 2)))
		}
		out = append(out, byte(dm[0]), byte(dm[0]>>8))
		if t == backend.KVQ4_1 || t == backend.KVQ5_1 {
			out = append(out, byte(dm[1]), byte(dm[1]>>8))
		}
		if t == backend.KVQ8_0 {
			for e := 0; e < 32; e++ {
				out = append(out, byte(code[b*8+e/4]>>(8*(e%4))))
			}
			continue
		}
		if t == backend.KVQ5_0 || t == backend.KVQ5_1 {
			h := code[hd/8+b]
			out = append(out, byte(h), byte(h>>8), byte(h>>16), byte(h>>24))
		}
		nib := func(e int) byte { return byte(code[b*4+e/8]>>(4*(e%8))) & 15 }
		for j := 0; j < 16; j++ {
			out = append(out, nib(j)|nib(j+16)<<4)
		}
	}
	return out
}

// TestKVQuantRowsMatchCPU: kvquant.comp writes every block-quantized type's
// rows with the bits the CPU backend's quantizer (ggml's reference
// quantizers: quant.QuantizeRow) gives the same values, the keys rotated
// at order 128 first (as ggml's fwht, TestKVQuantRotationOrder), the
// values as they are, into ring slots that wrap. The values' last row
// holds the blocks a quantizer treats apart: all zero, all below iq4_nl's
// 1e-15, the largest magnitude twice with either sign (the first wins),
// and one value repeated.
func TestKVQuantRowsMatchCPU(t *testing.T) {
	d := testDevice(t)
	const hd, kvHeads, tokens, slots, pos, rotK = 128, 2, 48, 40, 7, 128
	rng := rand.New(rand.NewSource(4343))
	ks, vs := make([]float32, tokens*kvHeads*hd), make([]float32, tokens*kvHeads*hd)
	for i := range ks {
		ks[i], vs[i] = float32(rng.NormFloat64()*3), float32(rng.NormFloat64()*0.7)
	}
	last := vs[(tokens-1)*kvHeads*hd:]
	for j := 0; j < 32; j++ {
		last[j] = 0
		last[32+j] = float32(rng.NormFloat64() * 1e-16)
		last[64+j] = float32(rng.Float64()*4 - 2)
		last[96+j] = 0.37
	}
	last[64+3], last[64+20] = -2.5, 2.5
	buf := func(name string, data []byte) *vulkan.Buffer {
		b, err := d.NewBuffer(name, uint64(len(data)), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Release)
		if err := b.Write(0, data); err != nil {
			t.Fatal(err)
		}
		return b
	}
	ksb, vsb := buf("ks", f32bytes(ks)), buf("vs", f32bytes(vs))
	step := stepBuffer(t, d, tokens, pos, nil)
	rows := kvHeads * slots
	for _, c := range kvBlockTypes {
		t.Run(string(c.kv), func(t *testing.T) {
			size := kvQuantBytes(c.kv, rows, hd)
			kc, vc := buf("kc", make([]byte, size)), buf("vc", make([]byte, size))
			k, err := d.kernel("kvquant", 3*4, hd, kvTypeCode(c.kv), kvTypeCode(c.kv), rotK, 0)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, d, func(r *vulkan.Recorder) error {
				push := []uint32{slots, math.Float32bits(hadamardScale(rotK)), math.Float32bits(hadamardScale(0))}
				return r.Dispatch("kvquant", k, []vulkan.Arg{vulkan.R(ksb), vulkan.R(vsb), {B: kc, Write: true, Format: fmtU32}, {B: vc, Write: true, Format: fmtU32}, vulkan.R(step)},
					push, tokens, kvHeads, 2)
			})
			bad := 0
			for _, h := range []struct {
				name string
				in   []float32
				out  *vulkan.Buffer
				rot  int
			}{{"keys", ks, kc, rotK}, {"values", vs, vc, 0}} {
				raw := make([]byte, size)
				if err := h.out.Read(0, raw); err != nil {
					t.Fatal(err)
				}
				words := make([]uint32, size/4)
				for i := range words {
					words[i] = binary.LittleEndian.Uint32(raw[4*i:])
				}
				want := make([]byte, c.kv.RowBytes(hd))
				for tk := 0; tk < tokens; tk++ {
					// a token the ring overwrote later has nothing to compare
					if tk+slots < tokens {
						continue
					}
					for kh := 0; kh < kvHeads; kh++ {
						x := append([]float32(nil), h.in[(tk*kvHeads+kh)*hd:(tk*kvHeads+kh+1)*hd]...)
						if h.rot != 0 {
							fwhtOrder(x, h.rot, false)
						}
						if err := quant.QuantizeRow(c.g, x, want); err != nil {
							t.Fatal(err)
						}
						got := ggmlRow(c.kv, words, rows, kh*slots+(pos+tk)%slots, hd)
						if !bytes.Equal(got, want) {
							if bad < 3 {
								t.Errorf("%s token %d head %d: kvquant.comp wrote\n%x, the CPU's quantizer\n%x", h.name, tk, kh, got, want)
							}
							bad++
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d rows differ from the CPU's quantizer", bad)
			}
		})
	}
}
