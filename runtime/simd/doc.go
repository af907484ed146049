// Package simd holds the native CPU kernels: the quantized and float
// matrix products of llama.cpp's x86 vec_dot kernels (AVX2+FMA+F16C, with
// AVX-512 VNNI where the CPU has it) and the activation quantizer, written
// in C with intrinsics and called through cgo.
//
// Why C through cgo: the Vulkan shim already requires cgo and gcc, intrinsics
// give register allocation and instruction scheduling for free (Go
// assembly would need both by hand for every tile shape), and one build
// serves every x86-64 CPU: each kernel file is compiled for its own target
// (#pragma GCC target) and the level is chosen at run time. A cgo call costs
// far more than one block's work (docs/benchmarks.md, "cpu: what a
// hand-off costs (cgo calls, wake-ups)"), so callers hand over whole row
// ranges, never single blocks.
//
// Results are bit-identical to the portable Go kernels (runtime/quant,
// runtime/cpu) at every level and for every tile shape: the integer block
// sums are exact however SIMD groups them, and the float work around them
// is the portable path's float32 operations in the same order, compiled
// without FP contraction (#pragma GCC optimize("fp-contract=off")) and
// with FMA instructions only where the portable path rounds once too (its
// fma32). kern.h says how a tile runs eight (row, vector) pairs in the
// float lanes so that this costs little; the tests in runtime/quant and
// runtime/cpu compare the two paths bit for bit.
//
// VKCHAT_CPU_KERNELS=portable turns the package off (Level reports 0) so
// the portable Go path can be tested and compared on the same machine;
// VKCHAT_CPU_KERNELS=avx2 caps it at the AVX2 kernels.
package simd
