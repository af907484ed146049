//go:build cgo && amd64

// AVX2 + FMA + F16C kernels (every x86-64 from Haswell and Zen 1 on).
#pragma GCC target("avx2,fma,f16c")
// The float work must round exactly as the portable Go kernels do: no FMA
// contraction (cgo does not allow -ffp-contract=off as a flag).
#pragma GCC optimize("fp-contract=off")
#include "simd.h"
#define SUFFIX _avx2
#define VNNI 0
#define TRQ 4
#define TVQ 2
#define TRK 2
#define TVK 4
#include "kern.h"
#define TVP 2
#define TVPK 2
#include "packed.h"
#include "quant.h"
