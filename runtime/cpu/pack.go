package cpu

import (
	"unsafe"

	"vkchat/runtime/arch"
	"vkchat/runtime/quant"
)

// packWeights hands every matrix of the model file to quant.Pack, which
// repacks those its native kernels run faster on (Q4_0, Q8_0, ...) and
// copies those its other native kernels would read from the mapping (F32,
// F16, BF16), where a truncated file is a SIGBUS no Go code can catch;
// products find the copies by the original data. The token
// embedding table is only gathered from, one row per token, so it is left
// alone unless it doubles as the output matrix. It returns the function
// that drops the copies and their size.
func packWeights(m *arch.Model) (func(), int64) {
	var ms []quant.Matrix
	var emb *byte
	if len(m.TokenEmbd.Data) > 0 && (len(m.Output.Data) == 0 || &m.Output.Data[0] != &m.TokenEmbd.Data[0]) {
		emb = &m.TokenEmbd.Data[0]
	}
	f := m.File
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Dims) != 2 {
			continue
		}
		data := f.TensorData(t)
		if len(data) == 0 || unsafe.SliceData(data) == emb {
			continue
		}
		ms = append(ms, quant.Matrix{Type: t.Type, Cols: int(t.Dims[0]), Rows: int(t.Dims[1]), Data: data})
	}
	return quant.Pack(ms)
}
