package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
)

// iq4nlTable is ggml-common.h's kvalues_iq4nl, written out here so that a
// table edited in iq4nl.go fails the test.
var iq4nlTable = [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// TestIQ4NLExactBlocks: a block whose values are a scale d0 (an f16 value)
// times table entries comes back exactly — its indices, each in the
// nibble ggml puts it (element j low in byte j, element j+16 high), the
// scale d0 and its sign, with the block's largest magnitude on either
// side of zero — and the score of a row of such blocks against a query is
// the Q8_0-converted query's dot with the decoded row.
func TestIQ4NLExactBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 43))
	for trial := 0; trial < 200; trial++ {
		d0 := float32(float64(1+r.IntN(1000)) / 4096)
		if trial%2 == 1 {
			d0 = -d0 // the largest magnitude positive: -127·d0 > 0
		}
		x := make([]float32, 64)
		idx := make([]byte, 64)
		for b := 0; b < 2; b++ {
			for j := 0; j < 32; j++ {
				i := b*32 + j
				idx[i] = byte(1 + r.IntN(15))
				if j == 7 {
					idx[i] = 0 // -127: the block's largest magnitude
				}
				x[i] = d0 * iq4nlTable[idx[i]]
			}
		}
		row, err := Quantize(ggml.IQ4_NL, x)
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < 2; b++ {
			blk := row[b*18 : (b+1)*18]
			if d := f16le(blk); d != d0 {
				t.Fatalf("trial %d block %d: scale %g, want %g", trial, b, d, d0)
			}
			for j := 0; j < 16; j++ {
				lo, hi := blk[2+j]&15, blk[2+j]>>4
				if lo != idx[b*32+j] || hi != idx[b*32+j+16] {
					t.Fatalf("trial %d block %d byte %d: nibbles %d, %d, want %d, %d", trial, b, j, lo, hi, idx[b*32+j], idx[b*32+j+16])
				}
			}
		}
		got := make([]float32, 64)
		if err := Dequantize(ggml.IQ4_NL, row, got); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if got[i] != x[i] {
				t.Fatalf("trial %d value %d: decoded %g, want %g", trial, i, got[i], x[i])
			}
		}
		q := randVec(r, 64)
		var score [1]float32
		var rd RowDotter
		rd.Dots(ggml.IQ4_NL, row, q, score[:])
		want, abs := dot64(x, activation(t, ggml.IQ4_NL, q))
		if dev := math.Abs(float64(score[0])-want) / abs; dev > maxRelDev(ggml.IQ4_NL) {
			t.Fatalf("trial %d: score %g, the converted query's dot with the row %g (relative %.3g)", trial, score[0], want, dev)
		}
	}
}

// TestIQ4NLQuantizeRow: on normal values each block's scale is the
// least-squares fit of the block over the entries nearest to x·(-127/max),
// rounded to f16 (quantize_row_iq4_nl_ref with ntry -1), and every value
// comes back within 14 steps of max/127 (half the widest gap of the
// table, 24, or the 127 - 113 beyond its top on the far side) plus what
// the refit moved the scale by over 127 steps; an all-zero block decodes
// to zeros.
func TestIQ4NLQuantizeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := randVec(r, 32*64)
	for i := 0; i < 32; i++ {
		x[5*32+i] = 0
	}
	row, err := Quantize(ggml.IQ4_NL, x)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(x))
	if err := Dequantize(ggml.IQ4_NL, row, got); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < len(x)/32; b++ {
		xb, gb := x[b*32:(b+1)*32], got[b*32:(b+1)*32]
		var amax, mx float64
		for _, v := range xb {
			if a := math.Abs(float64(v)); a > amax {
				amax, mx = a, float64(v)
			}
		}
		if amax == 0 {
			for i, v := range gb {
				if v != 0 {
					t.Fatalf("block %d (zeros) value %d decoded as %g", b, i, v)
				}
			}
			continue
		}
		var sqx, sq2 float64
		for _, v := range xb {
			best := 0
			al := float64(v) * -127 / mx
			for k := range iq4nlTable {
				if math.Abs(al-float64(iq4nlTable[k])) < math.Abs(al-float64(iq4nlTable[best])) {
					best = k
				}
			}
			qv, w := float64(iq4nlTable[best]), float64(v)*float64(v)
			sqx += w * qv * float64(v)
			sq2 += w * qv * qv
		}
		d := float64(f16le(row[b*18:]))
		if fit := sqx / sq2; math.Abs(d-fit) > 1e-3*math.Abs(fit)+1e-7 {
			t.Fatalf("block %d: scale %g, least-squares fit %g", b, d, fit)
		}
		for i := range xb {
			step := amax / 127
			if e := math.Abs(float64(gb[i] - xb[i])); e > 14*step+127*math.Abs(step-math.Abs(d)) {
				t.Fatalf("block %d value %d: %g decoded as %g (scale %g)", b, i, xb[i], gb[i], d)
			}
		}
	}
}
