// Activation rounding (round_f16 is in common.glsl) as llama.cpp's CPU matmuls apply it: x is converted to
// the weight type's vec_dot_type before the dot product (8-bit blocks for
// quantized weights, f16/bf16 for those float types). The kernels keep the
// rounded values as floats (q * d) rather than integers, so every weight
// type's dot code stays as it is; the products then differ from ggml's
// integer sums by float rounding only. The formulas are the reference
// backend's (runtime/quant/act.go): ggml's quantize_row_*_ref, but Q8_0 as
// ggml-cpu's x86 quantize_row_q8_0.
// Included by matvec.comp after the weight type (which defines ACT_*) and
// the x registers xs[NT][NU][UNIT / 4]; matvec_sg.comp, which keeps x in
// shared memory, defines ACTQ_HELPERS_ONLY and uses the rounding functions
// with act_quant's formulas on its own staging loop.

// round_bf16 is ggml's fp32 → bf16 (ties to even, NaN kept quiet).
float round_bf16(float x) {
	uint b = floatBitsToUint(x);
	bool nan = (b & 0x7FFFFFFFu) > 0x7F800000u;
	return uintBitsToFloat(nan ? (b | 0x00400000u) & 0xFFFF0000u : (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}

// round_away is C's roundf (halves away from zero) for |v| < 2^23: GLSL's
// round() may pick either way at halves. Adding the float just below 0.5
// with v's sign, then truncating, is exact: at a half the sum is a tie that
// rounds (to even) up to the next integer, and just below a half it stays
// below (plain + 0.5 would turn 0.49999997 into 1).
float round_away(float v) {
	return trunc(v + uintBitsToFloat((floatBitsToUint(v) & 0x80000000u) | 0x3EFFFFFFu));
}

vec4 round_away4(vec4 v) { return vec4(round_away(v.x), round_away(v.y), round_away(v.z), round_away(v.w)); }

#if defined(ACT_Q8_0) || defined(ACT_Q8_1)
// q8_id and q8_round are the 8-bit blocks' multiplier and rounding as
// runtime/quant/act.go has them: Q8_0 as ggml-cpu's x86 quantize_row_q8_0
// (x·(127/amax) rounded half to even, what llama.cpp's references were made
// with), Q8_1 as quantize_row_q8_1_ref (x·(1/d) rounded half away from zero).
float q8_id(float amax, float d) {
#if defined(ACT_Q8_1)
	return d != 0.0 ? 1.0 / d : 0.0;
#else
	return amax != 0.0 ? 127.0 / amax : 0.0;
#endif
}

vec4 q8_round(vec4 v) {
#if defined(ACT_Q8_1)
	return round_away4(v);
#else
	return roundEven(v);
#endif
}
#endif

#if !defined(ACTQ_HELPERS_ONLY)
// act_quant rounds unit j of token t in place. For Q8_1 it returns the
// block's s = f16(d * sum(q)) that ggml pairs with the weights' m; else 0.
float act_quant(const uint t, const uint j) {
#if defined(ACT_F16)
	[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
		vec4 v = xs[t][j][i];
		xs[t][j][i] = vec4(round_f16(v.x), round_f16(v.y), round_f16(v.z), round_f16(v.w));
	}
#elif defined(ACT_BF16)
	[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
		vec4 v = xs[t][j][i];
		xs[t][j][i] = vec4(round_bf16(v.x), round_bf16(v.y), round_bf16(v.z), round_bf16(v.w));
	}
#elif defined(ACT_Q8_0) || defined(ACT_Q8_1)
	// Q8_0/Q8_1, one block of 32 per unit: d = amax/127 stored as f16,
	// q = x·q8_id rounded by q8_round.
	vec4 m4 = vec4(0.0);
	[[unroll]] for (uint i = 0; i < UNIT / 4; i++) m4 = max(m4, abs(xs[t][j][i]));
	float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
	float d = amax / 127.0;
	float id = q8_id(amax, d);
	float dh = round_f16(d);
	vec4 qs = vec4(0.0);
	[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
		vec4 q = q8_round(xs[t][j][i] * id);
		qs += q;
		xs[t][j][i] = q * dh;
	}
#if defined(ACT_Q8_1)
	return round_f16((qs.x + qs.y + qs.z + qs.w) * d);
#endif
#elif defined(ACT_Q8_K)
	// Q8_K, one super-block of 256 per unit: the scale comes from the
	// element of largest magnitude, keeping its sign: q = nearest_int(x *
	// -127/max), d = 1/iscale, both f32. Max and min come from vector
	// trees (a scalar compare chain over 256 values takes llvmpipe a
	// minute to compile); only when max == -min exactly could the sign
	// differ from ggml's, which takes the first such element.
	vec4 hi = xs[t][j][0], lo = xs[t][j][0];
	[[unroll]] for (uint i = 1; i < UNIT / 4; i++) {
		hi = max(hi, xs[t][j][i]);
		lo = min(lo, xs[t][j][i]);
	}
	float mhi = max(max(hi.x, hi.y), max(hi.z, hi.w));
	float mlo = min(min(lo.x, lo.y), min(lo.z, lo.w));
	float mx = mhi >= -mlo ? mhi : mlo;
	// selects, not a branch: a branch around the writes would keep xs in
	// memory rather than registers
	float iscale = mx != 0.0 ? -127.0 / mx : 0.0;
	float d = mx != 0.0 ? 1.0 / iscale : 0.0;
	[[unroll]] for (uint i = 0; i < UNIT / 4; i++) {
		xs[t][j][i] = min(roundEven(xs[t][j][i] * iscale), vec4(127.0)) * d;
	}
#endif
	return 0.0;
}
#endif
