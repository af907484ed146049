// Package quant holds the reference CPU implementations of the GGML tensor
// types: their block layouts (bit-exact to ggml-common.h), dequantization,
// dot products, matrix-vector products and the reference quantizers.
//
// There are two dot products on purpose:
//
//   - DotRow is the exact definition: sum_i dequant(row)[i]*x[i] with the
//     weights decoded exactly as ggml's dequantize_row_* does and the sum
//     taken in float64. Use it as the yardstick.
//
//   - MatVec and MatMul are llama.cpp-compatible. llama.cpp's CPU backend
//     never multiplies float activations by quantized weights: it first
//     converts the activation vector to the weight type's "vec_dot_type"
//     (Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants,
//     fp16 for F16, bf16 for BF16, nothing for F32) and then runs an integer
//     (or fp16/bf16) dot product. MatVec does the same, once per call, and
//     reproduces the integer sums and the float operation order of ggml's
//     generic (non-SIMD) ggml_vec_dot_* kernels, so logits track llama.cpp's
//     far more closely than DotRow would. The SIMD kernels llama.cpp actually
//     runs on a given machine sum the same integers but may round the float
//     partial sums in another order, so agreement is to a few ulps, not bits.
//
// Float arithmetic that ggml rounds step by step is written with explicit
// float32 conversions: the Go spec allows fusing x*y+z into an FMA (and does
// on arm64), which would silently change results against ggml.
package quant
