//go:build !cgo || !amd64

package simd

const level = 0

// MatMul has no native kernels on this platform.
func MatMul(typ int, w []byte, rowBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	return false
}

// QuantizeQ8 has no native kernel on this platform.
func QuantizeQ8(x []float32, qs []int8, d []float32, sums []int32, s []float32) bool { return false }

// AttnKeyScores has no native kernels on this platform.
func AttnKeyScores(typ int, w []byte, rowBytes, keyBytes int, a *Acts, dst []float32) bool {
	return false
}

// Has reports false: no native kernels here.
func Has(typ int) bool { return false }

// ReadSum streams b and returns a checksum of it (see the cgo version).
func ReadSum(b []byte) uint64 { return readSumGo(b) }

// MatMulPacked has no native kernels on this platform.
func MatMulPacked(typ int, w []byte, groupBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	return false
}

// RMSNorm has no native kernel on this platform.
func RMSNorm(out, x, w []float32, eps float32) bool { return false }

// RMSNormRows has no native kernel on this platform.
func RMSNormRows(x []float32, width int, w []float32, eps float32) bool { return false }

// RopeRows has no native kernel on this platform.
func RopeRows(x []float32, width int, c, s []float32, neox bool) bool { return false }

// Rope has no native kernel on this platform.
func Rope(x, c, s []float32, neox bool) bool { return false }

// SSMScanHead has no native kernel on this platform.
func SSMScanHead(state, x, B, Cv, y []float32, dA, dt float32) bool { return false }

// DeltaStep has no native kernel on this platform.
func DeltaStep(m, q, k, v, o []float32, decay, beta, scale float32) bool { return false }

// CausalConv has no native kernel on this platform.
func CausalConv(out, state, in, wt []float32, K int) bool { return false }

// SwiGLU has no native kernel on this platform.
func SwiGLU(gate, up []float32) bool { return false }

// AttnOnline has no native kernel on this platform.
func AttnOnline(q, keys, vals, out []float32, span int, scale float32, f16 bool, work []float32, rescale []uint8) bool {
	return false
}

// AttnOnlineF16 has no native kernel on this platform.
func AttnOnlineF16(q []float32, keys, vals []uint16, stride int, out []float32, span int, scale float32, f16 bool, work []float32, rescale []uint8) bool {
	return false
}

// AttnScores has no native kernel on this platform.
func AttnScores(q, keys, scores []float32) bool { return false }

// AttnAccumulate has no native kernel on this platform.
func AttnAccumulate(out, vals, ms, vs []float32, rescale []uint8, f16 bool) bool { return false }

// F16ToF32 has no native kernel on this platform.
func F16ToF32(dst []float32, src []uint16) bool { return false }

// F32ToF16 has no native kernel on this platform.
func F32ToF16(dst []uint16, src []float32) bool { return false }

// RoundF16 has no native kernel on this platform.
func RoundF16(dst, src []float32) bool { return false }

// F16Rows has no native kernel on this platform.
func F16Rows(dst []float32, src []uint16, cols, stride, rows int) bool { return false }

// QuantizeQ8K has no native kernel on this platform.
func QuantizeQ8K(x []float32, qs []int8, d []float32, bsums []int32) bool { return false }

// MatMulInterleaved has no native kernels on this platform.
func MatMulInterleaved(typ int, w []byte, groupBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	return false
}

// HasAttnValues reports false: no native kernels here.
func HasAttnValues(vt, hd int) bool { return false }

// AttnValues has no native kernel on this platform.
func AttnValues(sc []float32, scale float32, vals []byte, vt, stride int, out []float32, f16 bool, state *[2]float32, work []float32, rescale []uint8) bool {
	return false
}
