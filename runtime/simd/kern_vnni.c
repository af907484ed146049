//go:build cgo && amd64

// The same kernels with AVX-512 VNNI on 256-bit vectors (Ice Lake, Zen 4):
// vpdpbusd replaces maddubs+madd for the 32-element blocks, and the 32
// vector registers of AVX-512VL allow larger tiles. Integer lane sums, and
// so the results, are the same as the AVX2 kernels'.
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
// The float work must round exactly as the portable Go kernels do: no FMA
// contraction (cgo does not allow -ffp-contract=off as a flag).
#pragma GCC optimize("fp-contract=off")
#include "simd.h"
#define SUFFIX _vnni
#define VNNI 1
#define TRQ 4
#define TVQ 2
#define TRK 1
#define TVK 8
#include "kern.h"
#define TVP 8
#define TVPK 4
#include "packed.h"
#include "quant.h"
