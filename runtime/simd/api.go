package simd

import "os"

// Acts is a batch of activation vectors of N elements each, converted to a
// weight type's vec_dot_type: Q8 quants Qs with per-block scales D (Q8_1:
// also S; Q8_0/Q8_1 quant sums or Q8_K bsums in Sums), or floats F.
// Vector v starts at element v*N of Qs/F and block v*N/blockSize of the
// per-block arrays.
type Acts struct {
	Qs   []int8
	D, S []float32
	Sums []int32
	F    []float32
	N    int
}

// F32GEMM is MatMul's type id for F32 weights in tinyBLAS's summation
// order (llama.cpp's F32 products of a batch); type 0 (F32) sums as
// ggml_vec_dot_f32 does.
const F32GEMM = 1024

// Q4KLanes is MatMul's and MatMulPacked's type id for Q4_K weights summed
// in ggml's AVX2 vec_dot lanes (runtime/quant's Matrix.VecDot); type 12
// (Q4_K) sums in ggml's repacked gemv's order.
const Q4KLanes = 1012

// Level is the kernel level in use: 0 portable (no native kernels, or
// VKCHAT_CPU_KERNELS=portable), 1 AVX2+FMA+F16C, 2 with AVX-512 VNNI.
func Level() int { return level }

// Describe names the level for logs and the devices list.
func Describe() string {
	switch level {
	case 1:
		return "AVX2 kernels"
	case 2:
		return "AVX-512 VNNI kernels"
	}
	if os.Getenv("VKCHAT_CPU_KERNELS") == "portable" {
		return "portable Go kernels (VKCHAT_CPU_KERNELS=portable)"
	}
	return "portable Go kernels"
}

func readSumGo(b []byte) uint64 {
	var s0, s1, s2, s3 uint64
	for i := 0; i+32 <= len(b); i += 32 {
		s0 ^= le64(b[i:])
		s1 ^= le64(b[i+8:])
		s2 ^= le64(b[i+16:])
		s3 ^= le64(b[i+24:])
	}
	return s0 ^ s1 ^ s2 ^ s3
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
