package cpu

import (
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// packWeights hands every matrix of the model file to quant.Pack, which
// repacks those its native kernels run faster on (Q4_0, Q8_0, ...) and
// copies those its other native kernels would read from the mapping (F32,
// F16, BF16), where a truncated file is a SIGBUS no Go code can catch;
// products find the copies by the original data. The token
// embedding table is only gathered from, one row per token, so it is left
// alone unless it doubles as the output matrix. It returns the function
// that drops the copies and their size. (The plan's Matrices are those
// matrices, the untied embedding left out.)
func packWeights(p *plan.Plan) (func(), int64) {
	ms := make([]quant.Matrix, len(p.Matrices))
	for i, w := range p.Matrices {
		ms[i] = matrix(w)
	}
	return quant.Pack(ms)
}
