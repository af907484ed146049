package quant

import "encoding/binary"

// The sub-byte kernels multiply four weights by four activations with one
// 64-bit multiply. Put weights q_0..q_3 >= 0 in the 16-bit lanes of Q, and
// activations y_0..y_3 in the lanes of Y in reverse order, packed as the
// integer sum y_i * 2^(16*(3-i)) so that negative values simply borrow from
// the lane above. Then, modulo 2^64,
//
//	Q*Y = C_0 + C_1*2^16 + C_2*2^32 + C_3*2^48,  C_3 = sum_i q_i*y_i,
//
// and every other pairing lands in a lower lane or beyond bit 63. While each
// |C_k| stays below 2^15, lane3 recovers C_3 exactly, so products can be
// summed before it is read: four for 4-bit weights (4*4*15*128 < 2^15), two
// for 5-bit, one for 6-bit. The integer sums are therefore exactly ggml's,
// only cheaper than byte-by-byte code, which Go does not vectorize.
//
// Weights come from little-endian words of 8 quant bytes, i.e. 8 consecutive
// weights: masking w>>s with a lane mask picks the even bytes' field (s =
// 0, 2, 4: bit offset within the byte) or the odd bytes' (s+8). Activations
// are packed to match: for every 8 consecutive elements, one word of the
// even ones and one of the odd ones (packY).
const (
	lane2  = 0x0003000300030003
	lane4  = 0x000f000f000f000f
	ones16 = 0x0001000100010001
)

// lane3 extracts C_3. Adding 2^47 turns the possibly negative lower lanes
// into a non-negative remainder that the arithmetic shift discards.
func lane3(p uint64) int32 { return int32(int64(p+1<<47) >> 48) }

// packY packs y (a multiple of 8 long) into dst: dst[2g] holds elements
// 8g, 8g+2, 8g+4, 8g+6 and dst[2g+1] the odd ones of that group, each in
// the reverse lane order the multiply needs.
func packY(dst []uint64, y []int8) {
	for g := 0; g < len(y)/8; g++ {
		e := y[8*g : 8*g+8]
		var ev, od int64
		for i := 0; i < 4; i++ {
			ev += int64(e[2*i]) << (16 * (3 - i))
			od += int64(e[2*i+1]) << (16 * (3 - i))
		}
		dst[2*g], dst[2*g+1] = uint64(ev), uint64(od)
	}
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// hbEven[b] and hbOdd[b] put 16 into lane i when bit 2i, respectively 2i+1,
// of b is set: the fifth bits of eight consecutive Q5_0/Q5_1 weights, in the
// lane order of the even-byte and odd-byte nibble words.
var hbEven, hbOdd = func() (e, o [256]uint64) {
	for b := 0; b < 256; b++ {
		for i := 0; i < 4; i++ {
			if b>>(2*i)&1 != 0 {
				e[b] |= 16 << (16 * i)
			}
			if b>>(2*i+1)&1 != 0 {
				o[b] |= 16 << (16 * i)
			}
		}
	}
	return
}()
