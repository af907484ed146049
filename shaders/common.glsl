// Shared by every kernel. The kernels are shaped for what llvmpipe (Mesa's
// CPU Vulkan driver) turns into fast code, measured on our machines
// (docs/benchmarks.md, "vk/vulkan: storage-buffer loads against texel
// fetches on lavapipe"):
//  * storage-buffer loads become a scalar loop over the 8 lanes with a
//    branch per component, even at subgroup-uniform addresses;
//  * texel-buffer fetches (texelFetch on a usamplerBuffer) go through the
//    sampler's AVX2 gather path, about ten times as fast for
//    R32G32B32A32_UINT,
// so every bulk read is a texel fetch and storage buffers are only written.
// On GPUs texel fetches go through the texture cache and are as good.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

// Byte i (0..15) of a 16-byte texel; i is a compile-time constant after
// unrolling, so this folds to one shift and mask.
uint texel_byte(uvec4 v, uint i) { return (v[i >> 2] >> (8u * (i & 3u))) & 0xFFu; }

// Signed byte i of a texel.
int texel_sbyte(uvec4 v, uint i) { return bitfieldExtract(int(v[i >> 2]), int(8u * (i & 3u)), 8); }

float half_lo(uint v) { return unpackHalf2x16(v).x; }
float half_hi(uint v) { return unpackHalf2x16(v).y; }

float silu(float x) { return x / (1.0 + exp(-x)); }

// Error-free transformations in f32: two_sum and two_prod leave a sum or
// a product as a pair (hi, lo) with hi + lo exact, for the kernels that
// must round as the reference's double sums and fused multiply-adds do.
// Every operation is precise, and each result a later step subtracts from
// passes through opaque, an integer operation on a value the compiler
// cannot know: Mesa simplifies (a + b) - a to b and the like (measured on
// lavapipe) even in precise expressions, which cancels the error terms.
float opaque(float x) { return uintBitsToFloat(floatBitsToUint(x) | (gl_WorkGroupID.z >> 31)); }

vec2 two_sum(float a, float b) {
	precise float s = opaque(a + b);
	precise float bb = opaque(s - a);
	precise float e = (a - (s - bb)) + (b - bb);
	return vec2(s, e);
}

// two_prod is Dekker's product: fma is no way to it, as a device may
// round it twice (llvmpipe computes it as a product and a sum).
vec2 two_prod(float a, float b) {
	precise float ca = opaque(4097.0 * a);
	precise float ah = opaque(ca - (ca - a));
	precise float al = a - ah;
	precise float cb = opaque(4097.0 * b);
	precise float bh = opaque(cb - (cb - b));
	precise float bl = b - bh;
	precise float p = opaque(a * b);
	precise float e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
	return vec2(p, e);
}

// fma_exact is a·b + c rounded once, as x86's FMA the reference runs.
// GLSL's fma may round twice: llvmpipe computes it as a product and a sum.
// The product's error comes from Dekker's split, the sum's from TwoSum
// (s + t = a·b's rounding + c); then t plus the product's error, rounded
// to odd (their sum's rounding moved off an even last bit toward their
// exact sum), added to s rounds as the exact sum does (Boldo and
// Melquiond's rounding to odd: t is at most half an ulp of s, so the odd
// rounding keeps the bits the last rounding reads); s + (t + e) rounded
// to nearest instead would round twice once in a great while. Every step
// is precise, and what a later step subtracts passes through opaque4 (as
// opaque). The scalar form is the vec4 one's first lane.
vec4 opaque4(vec4 x) { return uintBitsToFloat(floatBitsToUint(x) | uvec4(gl_WorkGroupID.z >> 31)); }

vec4 fma_exact(vec4 a, vec4 b, vec4 c) {
	precise vec4 p = opaque4(a * b);
	precise vec4 ca = opaque4(4097.0 * a);
	precise vec4 ah = opaque4(ca - (ca - a));
	precise vec4 al = a - ah;
	precise vec4 cb = opaque4(4097.0 * b);
	precise vec4 bh = opaque4(cb - (cb - b));
	precise vec4 bl = b - bh;
	precise vec4 e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
	precise vec4 s = opaque4(p + c);
	precise vec4 sb = opaque4(s - p);
	precise vec4 t = (p - (s - sb)) + (c - sb);
	precise vec4 u = opaque4(t + e);
	precise vec4 ub = opaque4(u - t);
	precise vec4 ue = (t - (u - ub)) + (e - ub);
	uvec4 bits = floatBitsToUint(u);
	[[unroll]] for (uint i = 0; i < 4; i++) {
		if (ue[i] != 0.0 && (bits[i] & 1u) == 0u) {
			bits[i] += (ue[i] > 0.0) == (u[i] > 0.0) ? 1u : 0xFFFFFFFFu;
		}
	}
	precise vec4 r = s + uintBitsToFloat(bits);
	return r;
}

float fma_exact(float a, float b, float c) { return fma_exact(vec4(a), vec4(b), vec4(c)).x; }

// exp_exact is e^x rounded to f32 as the CPU backend's (a float64 exp
// rounded once, as C's expf is within rounding of): x = (32k + j)·ln2/32
// + r with ln2/32 in three parts (n·L1 exact), |r| <= ln2/64 as a pair,
// e^r = 1 + r + a short tail, times 2^(j/32) from a table of pairs, all
// kept to about 2^-36 before the one rounding, then ·2^k. The device's
// exp is within a few ulps only, and an ulp of an attention weight moves
// the values it sums. Below about e^-87 the result is flushed to 0 where
// the device flushes denormals (their weight adds nothing to a sum of 1).
const uint EXP_HI[32] = uint[32](0x3F800000u, 0x3F82CD87u, 0x3F85AAC3u, 0x3F88980Fu, 0x3F8B95C2u, 0x3F8EA43Au, 0x3F91C3D3u, 0x3F94F4F0u,
	0x3F9837F0u, 0x3F9B8D3Au, 0x3F9EF532u, 0x3FA27043u, 0x3FA5FED7u, 0x3FA9A15Bu, 0x3FAD583Fu, 0x3FB123F6u,
	0x3FB504F3u, 0x3FB8FBAFu, 0x3FBD08A4u, 0x3FC12C4Du, 0x3FC5672Au, 0x3FC9B9BEu, 0x3FCE248Cu, 0x3FD2A81Eu,
	0x3FD744FDu, 0x3FDBFBB8u, 0x3FE0CCDFu, 0x3FE5B907u, 0x3FEAC0C7u, 0x3FEFE4BAu, 0x3FF5257Du, 0x3FFA83B3u);
const uint EXP_LO[32] = uint[32](0x00000000u, 0xB34EA7A9u, 0x334F9891u, 0xB37EDA4Bu, 0xB260ABA1u, 0xB3697465u, 0x33675624u, 0xB32E0212u,
	0x33231B71u, 0xB30C5563u, 0x33412342u, 0x30C3125Au, 0xB32C9D5Eu, 0xB3162B08u, 0xB22DEAF6u, 0xB37C5AA8u,
	0x32CFE77Au, 0x330EC5F7u, 0xB3414FE8u, 0xB2D6663Eu, 0x320AA837u, 0xB37323A2u, 0x3228FC24u, 0xB35C1DAAu,
	0xB2D4A58Au, 0xB3504A1Cu, 0xB21EAB59u, 0xB2441BE6u, 0xB24116DEu, 0xB348464Au, 0x32292436u, 0xB2923758u);

float exp_exact(float x) {
	x = clamp(x, -110.0, 88.0);
	const float L1 = uintBitsToFloat(0x3CB16000u), L2 = uintBitsToFloat(0x3710BFBFu), L3 = uintBitsToFloat(0xAAE30880u);
	precise float xs = x * uintBitsToFloat(0x4238AA3Bu); // 32/ln2
	float n = roundEven(xs);
	int ni = int(n);
	precise float r1 = x - n * L1;
	vec2 p = two_prod(n, L2);
	vec2 rr = two_sum(r1, -p.x);
	precise float rl = (rr.y - p.y) - n * L3;
	float r = rr.x;
	precise float tail = r * r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0))));
	vec2 e = two_sum(1.0, rr.x);
	precise float el = e.y + (rl + tail);
	float th = uintBitsToFloat(EXP_HI[ni & 31]), tl = uintBitsToFloat(EXP_LO[ni & 31]);
	vec2 m = two_prod(th, e.x);
	precise float lo = m.y + (th * el + tl * e.x);
	precise float res = m.x + lo;
	return ldexp(res, ni >> 5);
}

// tanh_exact is tanh(x) rounded to f32 as the CPU backend's tanhf (a
// float64 tanh rounded once), for the soft-caps: tanh(a) = (E - 1)/(E + 1)
// with E = e^(2a), a = |x|, carried as pairs to about 2^-46 before the one
// rounding. exp_exact's 2^-36 is too coarse here: E - 1 is far below E
// for small a, so the reduction's r gets its square exactly (two_prod) and
// the cross terms rl·r·(1 + r/2), the table a third part (EXP_LO2), and
// E - 1 is summed from 2^k·T - 1 (exact as a pair) and 2^k·T·(e^r - 1),
// so that below ln2/64 it is e^r - 1 itself, not 1 + ρ less 1. The
// quotient is q0 plus its exact remainder's correction (as rms_scale). Below 2^-12 tanh rounds to x;
// from 10 on to ±1 (the clamp keeps E finite).
float tanh_exact(float x) {
	// 2^(j/32) past EXP_HI + EXP_LO (about 2^-48 short); local, so that only
	// kernels calling tanh_exact hold it
	const uint EXP_LO2[32] = uint[32](0x00000000u, 0x26875CF9u, 0xA51D6747u, 0x2524EBBFu, 0xA5919042u, 0xA6B0FF49u, 0xA6F327C1u, 0x259612E9u,
		0x26A5BD1Bu, 0xA6AB1D75u, 0x260D6D05u, 0x2244DBD0u, 0x26E3A873u, 0x25EF8542u, 0x25AC6498u, 0x26963E1Fu,
		0xA65BDD34u, 0x267748DCu, 0x26DAFAA2u, 0x2622B3E2u, 0xA524583Bu, 0x269E8A04u, 0x23E3E236u, 0xA65D2F6Fu,
		0xA6285E33u, 0x26DD54F6u, 0x2408832Cu, 0x258A81E6u, 0xA55A25FAu, 0xA5A34B9Bu, 0x25C2C7BAu, 0x24CE9F09u);
	float a = min(abs(x), 10.0);
	const float L1 = uintBitsToFloat(0x3CB16000u), L2 = uintBitsToFloat(0x3710BFBFu), L3 = uintBitsToFloat(0xAAE30880u);
	precise float a2 = 2.0 * a;
	precise float xs = a2 * uintBitsToFloat(0x4238AA3Bu); // 32/ln2
	float n = roundEven(xs);
	int ni = int(n);
	precise float r1 = a2 - n * L1;
	vec2 p = two_prod(n, L2);
	vec2 rr = two_sum(r1, -p.x);
	precise float rl = (rr.y - p.y) - n * L3;
	float r = rr.x;
	// ρ = e^(r + rl) - 1 = r + r²/2 + r³/6 + (r⁴/24 + ...) + rl·e^r,
	// r² and r³/6 as pairs (r³/6 is up to 2^-22, an f32 of it 2^-46 off)
	vec2 sq = two_prod(r, r);
	vec2 cu = two_prod(sq.x, r);
	precise float c3 = cu.x * (1.0 / 6.0);
	vec2 c6 = two_prod(c3, 6.0);
	precise float c3l = (((cu.x - c6.x) - c6.y) + (cu.y + sq.y * r)) * (1.0 / 6.0);
	precise float h4 = sq.x * sq.x * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0)));
	vec2 s0 = two_sum(c3, h4);
	vec2 s1 = two_sum(0.5 * sq.x, s0.x);
	vec2 s2 = two_sum(r, s1.x);
	precise float rlo = s2.y + (s1.y + ((s0.y + c3l) + (0.5 * sq.y + (rl + rl * (r + 0.5 * sq.x)))));
	vec2 rho = two_sum(s2.x, rlo);
	// E - 1 = (2^k·T - 1) + 2^k·th·ρ + 2^k·(th·ρl + tl·ρ), T = th + tl + tl2
	float sc = ldexp(1.0, ni >> 5);
	float th = uintBitsToFloat(EXP_HI[ni & 31]) * sc, tl = uintBitsToFloat(EXP_LO[ni & 31]) * sc;
	float tl2 = uintBitsToFloat(EXP_LO2[ni & 31]) * sc;
	vec2 A = two_sum(th, -1.0);
	vec2 At = two_sum(A.x, tl); // tl is far above E - 1's last bits
	vec2 B = two_prod(th, rho.x);
	precise float C = th * rho.y + tl * rho.x;
	vec2 h = two_sum(At.x, B.x);
	precise float nlo = h.y + (((A.y + At.y) + tl2) + (B.y + C));
	vec2 num = two_sum(h.x, nlo);
	vec2 d = two_sum(num.x, 2.0);
	precise float dlo = d.y + num.y;
	precise float q0 = opaque(num.x / d.x);
	vec2 pr = two_prod(q0, d.x);
	precise float rem = ((num.x - pr.x) - pr.y) + (num.y - q0 * dlo);
	precise float res = q0 + rem / d.x;
	float t = a < uintBitsToFloat(0x39800000u) ? a : res; // 2^-12
	return uintBitsToFloat(floatBitsToUint(t) | (floatBitsToUint(x) & 0x80000000u));
}

// An RMS norm's sum of squares as ggml's CPU rms_norm takes it: each
// square rounded to f32, the sum in double (ggml_float), the mean rounded
// once to f32, then 1.0f/sqrtf(mean + eps). A sum in f32 rounds at every
// add and lands an ulp or more away from that mean, which the F16 and
// block roundings downstream (the GELU table, a quantized cache's codes)
// turn into whole steps. Here the sum is a pair whose hi + lo carries it
// to about 48 bits, so that it rounds to the f32 the double sum does in
// whatever order the lanes add it.
vec2 sq_add(vec2 s, float x) {
	precise float p = x * x;
	vec2 t = two_sum(s.x, p);
	precise float lo = s.y + t.y;
	return vec2(t.x, lo);
}

vec2 sq_add4(vec2 s, vec4 v) { return sq_add(sq_add(sq_add(sq_add(s, v.x), v.y), v.z), v.w); }

// pair_add adds two pairs (two lanes' partial sums).
vec2 pair_add(vec2 a, vec2 b) {
	vec2 t = two_sum(a.x, b.x);
	precise float lo = (a.y + b.y) + t.y;
	return vec2(t.x, lo);
}

// subgroup_pair_sum is pair_add over the subgroup (every lane active).
vec2 subgroup_pair_sum(vec2 s) {
	for (uint m = 1; m < gl_SubgroupSize; m *= 2) {
		s = pair_add(s, subgroupShuffleXor(s, m));
	}
	return s;
}

// rms_scale is 1/sqrt(mean + eps) of the pair s over n values, the mean
// (s.x + s.y)/n rounded once to f32: the quotient of the rounded sum, then
// its exact remainder and the low part divided in as a correction.
float rms_scale(vec2 s, float n, float eps) {
	vec2 h = two_sum(s.x, s.y);
	precise float q = h.x / n;
	vec2 pr = two_prod(q, n);
	precise float r = (h.x - pr.x) - pr.y;
	precise float mean = q + (r + h.y) / n;
	precise float scale = 1.0 / sqrt(mean + eps);
	return scale;
}

// round_f16 rounds to the nearest f16 (ties to even) exactly: in integer
// arithmetic in the normal range, as a multiple of 2^-24 below it, to
// infinity above. packHalf2x16's rounding is left to the implementation,
// and llvmpipe's takes long to compile. Selects, not branches: this runs
// unrolled on every x register, and branches there cost seconds of
// compiling.
float round_f16(float x) {
	uint b = floatBitsToUint(x);
	uint e = (b >> 23) & 0xFFu;
	uint r = (b + 0xFFFu + ((b >> 13) & 1u)) & ~0x1FFFu;
	float sub = roundEven(x * 16777216.0) * (1.0 / 16777216.0);
	float inf = uintBitsToFloat((b & 0x80000000u) | 0x7F800000u);
	return e < 113u ? sub : (((r >> 23) & 0xFFu) <= 142u ? uintBitsToFloat(r) : inf);
}

// f16_bits is the IEEE binary16 bit pattern of x rounded to nearest even,
// as quant.FP32ToFP16: integer rounding in the normal range, a multiple of
// 2^-24 below it, infinity above, NaN as a quiet NaN. Selects, not branches (see round_f16).
uint f16_bits(float x) {
	uint b = floatBitsToUint(x);
	uint s = (b >> 16) & 0x8000u;
	uint a = b & 0x7FFFFFFFu;
	uint e = a >> 23;
	uint r = (a + 0xFFFu + ((a >> 13) & 1u)) & ~0x1FFFu;
	uint nrm = min((r >> 13) - (112u << 10), 0x7C00u);
	uint sub = uint(roundEven(abs(x) * 16777216.0));
	return s | (a > 0x7F800000u ? 0x7E00u : (e < 113u ? sub : nrm));
}

// gelu_f16 is GELU in its tanh form as llama.cpp's CPU backend computes it
// (GGML_GELU_FP16): x rounded to F16 and looked up in the F16 table T
// (quant.GELUTable as f32 bits, one entry per F16 bit pattern, R32_UINT),
// the CPU backend's own table, so both agree bit for bit; zero for
// x <= -10 and x itself for x >= 10. The device's tanh is not glibc's:
// computed here it moved entries by an F16 ulp.
float gelu_f16(usamplerBuffer T, float x) {
	float g = uintBitsToFloat(texelFetch(T, int(f16_bits(x) & 0xFFFFu)).x);
	return x <= -10.0 ? 0.0 : (x >= 10.0 ? x : g);
}
