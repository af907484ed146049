// Package quant holds the reference CPU implementations of the GGML tensor
// types: their block layouts (bit-exact to ggml-common.h), dequantization,
// dot products, matrix-vector products and the reference quantizers.
//
// There are two dot products on purpose:
//
//   - DotRow is the exact definition: sum_i dequant(row)[i]*x[i], with the
//     weights decoded exactly as ggml's dequantize_row_* does and the sum
//     taken in float64. Use it as the yardstick.
//
//   - MatVec and MatMul are llama.cpp-compatible. llama.cpp's CPU backend
//     never multiplies float activations by quantized weights: it first
//     converts the activation vector to the weight type's "vec_dot_type"
//     (Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants,
//     fp16 for F16, bf16 for BF16, nothing for F32) with ggml's reference
//     converters, and then runs an integer (or fp16/bf16/f32) dot product.
//     MatVec does the same, converting x once per call, and computes exactly
//     the integer sums of ggml's generic (non-SIMD) ggml_vec_dot_* kernels.
//     The float work around them follows the generic kernels operation by
//     operation for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q2_K. For Q3_K..Q6_K the
//     generic kernels spread each super-block's integer sum over eight float
//     lanes; here each super-block's sum is scaled and added directly
//     (Q4_K as x86 llama.cpp's repacked gemv adds them, Q5_K in its AVX2
//     vec_dot's lanes: q45k.go), and
//     F16/BF16 sum their products in four float64 chains rather than one.
//     Both change only float rounding (about 1e-7 relative for the K-quants,
//     the last bit in rare cases for the float types), which is the size of
//     the difference between ggml's generic kernels and the AVX2 or NEON
//     kernels llama.cpp really runs, so logits agree with llama.cpp's to a
//     few ulps, not bits, as they would between two llama.cpp machines.
//     F32 sums as llama.cpp's AVX2 build does (float32 FMA lanes: tinyBLAS's
//     order, or ggml_vec_dot_f32's for Matrix.RowByRow and rows tinyBLAS
//     refuses), the same for one vector as for a batch.
//
// Where the CPU has them, MatVec and MatMul run the native kernels of
// runtime/simd instead of the Go ones (Pack'd weights run their repacked
// kernels: Q4_0, Q8_0, Q4_K and Q5_K in groups of 8 rows, the other
// quantized types interleaved block by block; packed.go). Those compute the same integers and the same
// float32 operations in the same order, so results are bit-identical
// either way; the Go kernels stay as the portable path and as the oracle
// the native ones are tested against (VKCHAT_CPU_KERNELS=portable).
//
// Float arithmetic that ggml rounds step by step is written with explicit
// float32 conversions: the Go spec allows fusing x*y+z into an FMA (and Go
// does on arm64), which would silently change results against ggml.
package quant
