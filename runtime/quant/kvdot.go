package quant

import (
	"fmt"

	"vkchat/runtime/ggml"
)

// RowDotter computes what ggml's CPU flash attention computes for a score
// against a quantized KV cache: the query converted to the cache type's
// vec_dot type (Q8_0 for Q8_0, Q4_0 and Q5_0) and that type's block dot
// product with each key row. It keeps the conversion's scratch, so a
// caller holding one per worker allocates nothing per call.
type RowDotter struct{ a acts }

// Dots writes into out[i] the dot product of x with row i of rows, len(out)
// rows of len(x) values of type t packed one after another.
func (d *RowDotter) Dots(t ggml.Type, rows []byte, x []float32, out []float32) {
	f := formats[t]
	if f == nil || f.elems == 1 || len(x)%f.elems != 0 {
		panic(fmt.Sprintf("quant: RowDotter: %v rows of %d values", t, len(x)))
	}
	d.a.prepare(f.vecType, x, len(x), 1, false)
	av := d.a.view(0)
	rb := len(x) / f.elems * f.bytes
	rows = rows[:len(out)*rb]
	for i := range out {
		out[i] = f.dot(rows[i*rb:(i+1)*rb], &av)
	}
}

// QuantizeRow encodes src (a whole number of blocks) as t into dst with the
// quantizer ggml's CPU backend writes a KV cache row with, without
// allocating; dst must hold the encoded row.
func QuantizeRow(t ggml.Type, src []float32, dst []byte) error {
	q, ok := quantizers[t]
	if !ok {
		return fmt.Errorf("quant: no quantizer for %v", t)
	}
	f, err := formatOf(t)
	if err != nil {
		return err
	}
	n, err := f.rowBytes(t, len(src))
	if err != nil {
		return err
	}
	if len(dst) < n {
		return fmt.Errorf("quant: %d bytes for a %v row of %d values that takes %d", len(dst), t, len(src), n)
	}
	q(src, dst[:n])
	return nil
}
