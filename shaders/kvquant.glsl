// A block-quantized KV cache (q8_0, q4_0), shared by kvquant.comp (the
// write) and attnq.comp (the read). A layer's cache buffer holds its rows
// (kv head × slot) as two regions, so every access is a whole aligned
// word: first the codes, CW words per row (q8_0: four int8 codes a word,
// q4_0: eight 4-bit codes a word, element e in nibble e % 8), then the
// blocks' f16 scales, SW words per row (a row's scales padded to an even
// count). With a head size a multiple of 64 that is exactly llama.cpp's
// 34 (18) bytes per 32 values.
//
// The includer defines HD (head size) before including this file.

const uint NB = HD / 32; // blocks per row
const uint SW = (NB + 1) / 2;

// cw is the code words per row of a cache of type t (1 q8_0, 2 q4_0).
uint cw(uint t) { return t == 1 ? HD / 4 : HD / 8; }

// round_half_away rounds as C's roundf: half away from zero.
float round_half_away(float v) {
	float t = trunc(v);
	return abs(v - t) >= 0.5 ? t + sign(v) : t;
}

// f16_exact is x rounded to the nearest f16 (ties to even), whose
// packHalf2x16 is then exact whatever the driver's rounding.
float f16_exact(float x) { return round_f16(x); }
