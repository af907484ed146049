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

// Level is the kernel level in use: 0 portable (no native kernels, or
// VKCHAT_CPU_KERNELS=portable), 1 AVX2+FMA+F16C, 2 with AVX-512 VNNI.
func Level() int { return level }

// Describe names the level for logs and the devices list.
func Describe() string {
	switch level {
	case 1:
		return "AVX2+FMA+F16C"
	case 2:
		return "AVX2+FMA+F16C, AVX-512 VNNI"
	}
	if os.Getenv("VKCHAT_CPU_KERNELS") == "portable" {
		return "portable Go (VKCHAT_CPU_KERNELS=portable)"
	}
	return "portable Go"
}
