// A block-quantized KV cache (q8_0, q4_0, q5_0, q4_1, q5_1, iq4_nl), shared by
// kvquant.comp (the write) and attnq.comp (the read). A layer's cache
// buffer holds its rows (kv head × slot) as two regions, so every access
// is a whole aligned word: first the codes, cw(t) words per row (q8_0:
// four int8 codes a word; the 4- and 5-bit types: eight low nibbles a
// word, element e in nibble e % 8, and for q5_x then a word per block of
// fifth bits, bit j for element j; iq4_nl's nibbles index its table),
// then the blocks' f16 scales, sw(t) words per row (q8_0, q4_0, q5_0,
// iq4_nl: a scale a half, a row's padded to an even count; q4_1, q5_1: a
// word per block, the scale and the minimum). With a head size a multiple
// of 64 that is exactly llama.cpp's 34, 18, 22, 20, 24 and 18 bytes per 32
// values. The plain half of a mixed pair (an
// f16 or f32 K beside a quantized V, or the reverse) is rows of codes
// alone, f16 two a word (element e in the low half when e is even) or f32
// a word, and no scales.
//
// The includer defines HD (head size) before including this file.

const uint NB = HD / 32; // blocks per row
const uint SW = (NB + 1) / 2;

// Type codes: 1 q8_0, 2 q4_0, 3 q5_0, 4 q4_1, 5 q5_1, 6 f16, 7 f32,
// 8 iq4_nl.

// plain: a half kept in f16 or f32, not in blocks.
bool plain(uint t) { return t == 6 || t == 7; }

// cw is the code words per row of a cache of type t.
uint cw(uint t) {
	return t == 7 ? HD : t == 6 ? HD / 2 : t == 1 ? HD / 4 : (t == 3 || t == 5) ? HD / 8 + NB : HD / 8;
}

// has_min: the type's blocks carry a minimum (q4_1, q5_1).
bool has_min(uint t) { return t == 4 || t == 5; }

// sw is the scale words per row of a cache of type t.
uint sw(uint t) { return plain(t) ? 0 : has_min(t) ? NB : SW; }

// iq4nl_value is entry n of iq4_nl's table (ggml's kvalues_iq4nl: -127,
// -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113),
// four signed bytes a word picked by selects: an array indexed by a
// value would be copied into memory on every call.
int iq4nl_value(uint n) {
	uint w = n < 8u ? (n < 4u ? 0xBFAD9881u : 0xF6EADDCFu) : (n < 12u ? 0x26190D01u : 0x71594535u);
	return int(w << (24u - 8u * (n & 3u))) >> 24;
}

// round_half_away rounds as C's roundf: half away from zero.
float round_half_away(float v) {
	float t = trunc(v);
	return abs(v - t) >= 0.5 ? t + sign(v) : t;
}

// f16_exact is x rounded to the nearest f16 (ties to even), whose
// packHalf2x16 is then exact whatever the driver's rounding.
float f16_exact(float x) { return round_f16(x); }
