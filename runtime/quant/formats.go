package quant

import (
	"fmt"

	"vkchat/runtime/ggml"
)

// format is what this package knows about one weight type.
type format struct {
	elems, bytes int                             // per block
	dequant      func(src []byte, dst []float32) // whole blocks; src holds exactly len(dst) elements
	vecType      ggml.Type                       // what ggml converts activations to
	dot          func(row []byte, a *actView) float32
	native       bool // simd has a kernel for this type on this CPU
}

var formats = map[ggml.Type]*format{
	ggml.F32:   {1, 4, dequantF32, ggml.F32, dotF32, false},
	ggml.F16:   {1, 2, dequantF16, ggml.F16, dotF16, false},
	ggml.BF16:  {1, 2, dequantBF16, ggml.BF16, dotBF16, false},
	ggml.Q4_0:  {32, 18, dequantQ4_0, ggml.Q8_0, dotQ4_0, false},
	ggml.Q4_1:  {32, 20, dequantQ4_1, ggml.Q8_1, dotQ4_1, false},
	ggml.Q5_0:  {32, 22, dequantQ5_0, ggml.Q8_0, dotQ5_0, false},
	ggml.Q5_1:  {32, 24, dequantQ5_1, ggml.Q8_1, dotQ5_1, false},
	ggml.Q8_0:  {32, 34, dequantQ8_0, ggml.Q8_0, dotQ8_0, false},
	ggml.Q2_K:  {256, 84, dequantQ2K, ggml.Q8_K, dotQ2K, false},
	ggml.Q3_K:  {256, 110, dequantQ3K, ggml.Q8_K, dotQ3K, false},
	ggml.Q4_K:  {256, 144, dequantQ4K, ggml.Q8_K, dotQ4K, false},
	ggml.Q5_K:  {256, 176, dequantQ5K, ggml.Q8_K, dotQ5K, false},
	ggml.Q6_K:  {256, 210, dequantQ6K, ggml.Q8_K, dotQ6K, false},
	ggml.MXFP4: {32, 17, dequantMXFP4, ggml.Q8_0, dotMXFP4, false},
	// a KV cache type here, not a weight type (iq4nl.go)
	ggml.IQ4_NL: {32, 18, dequantIQ4NL, ggml.Q8_0, dotIQ4NL, false},
}

func formatOf(t ggml.Type) (*format, error) {
	f, ok := formats[t]
	if !ok {
		return nil, fmt.Errorf("quant: unsupported tensor type %v", t)
	}
	return f, nil
}

// rowBytes is the size of n elements of f, or an error if n is not a whole
// number of blocks.
func (f *format) rowBytes(t ggml.Type, n int) (int, error) {
	if n < 0 || n%f.elems != 0 {
		return 0, fmt.Errorf("quant: %d elements is not a whole number of %v blocks of %d", n, t, f.elems)
	}
	return n / f.elems * f.bytes, nil
}

// Dequantize decodes len(dst) elements (a whole number of blocks) from src,
// exactly as ggml's dequantize_row_* does. It returns an error, and leaves
// dst unspecified, if the type is unsupported, len(dst) is not a whole number
// of blocks or src is shorter than those blocks; extra bytes in src are
// ignored.
func Dequantize(t ggml.Type, src []byte, dst []float32) error {
	f, err := formatOf(t)
	if err != nil {
		return err
	}
	need, err := f.rowBytes(t, len(dst))
	if err != nil {
		return err
	}
	if len(src) < need {
		return fmt.Errorf("quant: %d %v elements need %d bytes, have %d", len(dst), t, need, len(src))
	}
	f.dequant(src[:need], dst)
	return nil
}

// DotRow returns sum_i dequant(row)[i]*x[i] for len(x) elements: the exact
// definition of a row product, with the weights decoded as Dequantize does
// and the products and sum taken in float64. It panics if the type is
// unsupported, len(x) is not a whole number of blocks or row is too short.
func DotRow(t ggml.Type, row []byte, x []float32) float32 {
	f, err := formatOf(t)
	if err != nil {
		panic(err)
	}
	need, err := f.rowBytes(t, len(x))
	if err != nil {
		panic(err)
	}
	if len(row) < need {
		panic(fmt.Sprintf("quant: DotRow: %d %v elements need %d bytes, have %d", len(x), t, need, len(row)))
	}
	// Decode a chunk at a time on the stack: no allocation, and the chunk
	// is a whole number of blocks of every type.
	var buf [256]float32
	var sum float64
	per := len(buf) / f.elems * f.bytes
	for off := 0; off < len(x); off += len(buf) {
		n := min(len(buf), len(x)-off)
		w := buf[:n]
		nb := n / f.elems * f.bytes
		f.dequant(row[off/len(buf)*per:][:nb], w)
		for i, v := range w {
			sum += float64(v) * float64(x[off+i])
		}
	}
	return float32(sum)
}
