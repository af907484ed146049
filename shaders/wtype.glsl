// Selects the weight type a kernel variant is compiled for (WTYPE_*).
#if defined(WTYPE_F32)
#include "types/f32.glsl"
#elif defined(WTYPE_F16)
#include "types/f16.glsl"
#elif defined(WTYPE_BF16)
#include "types/bf16.glsl"
#elif defined(WTYPE_Q4_0)
#include "types/q4_0.glsl"
#elif defined(WTYPE_Q4_1)
#include "types/q4_1.glsl"
#elif defined(WTYPE_Q5_0)
#include "types/q5_0.glsl"
#elif defined(WTYPE_Q5_1)
#include "types/q5_1.glsl"
#elif defined(WTYPE_Q8_0)
#include "types/q8_0.glsl"
#elif defined(WTYPE_Q2_K)
#include "types/q2_k.glsl"
#elif defined(WTYPE_Q3_K)
#include "types/q3_k.glsl"
#elif defined(WTYPE_Q4_K)
#include "types/q4_k.glsl"
#elif defined(WTYPE_Q5_K)
#include "types/q5_k.glsl"
#elif defined(WTYPE_Q6_K)
#include "types/q6_k.glsl"
#elif defined(WTYPE_MXFP4)
#include "types/mxfp4.glsl"
#else
#error "no WTYPE_* defined"
#endif
#define SUBS (UNIT / SUBN)
