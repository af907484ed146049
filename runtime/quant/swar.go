package quant

// The 4- and 5-bit kernels multiply four weights by four activations with one
// 64-bit multiply. With the weights q_i in the 16-bit lanes of Q and the
// activations, biased to y_i+128 >= 0, in the lanes of Y in reverse order,
// lane 3 of Q*Y is sum_i q_i*(y_i+128): every other pairing lands in a lower
// lane or beyond bit 63. Lanes hold at most 4*31*255 per product, so two
// (5-bit) or four (4-bit) products can be summed before lane 3 is read
// without a carry between lanes, and the integer sums are exact: the result
// is the same as ggml's scalar loops, only cheaper.
//
// A 32-weight block's nibbles are read as two uint64 words w0 (qs[0:8]) and
// w1 (qs[8:16]); masking w>>s with lane16 for s = 0, 8, 4, 12 yields the low
// nibbles of the even bytes, of the odd bytes, the high nibbles of the even
// bytes and of the odd bytes. The packed activation words follow that order.
const (
	lane16 = 0x000f000f000f000f
	ones16 = 0x0001000100010001 // multiplying by it sums the lanes into lane 3
)

// swarGroups lists, for each of the eight packed words of a block, the block
// position that lane 0 of the weight word holds; lane i holds base+2i.
var swarGroups = [8]int{0, 1, 16, 17, 8, 9, 24, 25}

// packY fills the eight words for one 32-element block of int8 activations.
func packY(dst *[8]uint64, y *[32]int8) {
	for g, base := range swarGroups {
		var w uint64
		for i := 0; i < 4; i++ {
			w |= uint64(int32(y[base+2*i])+128) << (16 * (3 - i))
		}
		dst[g] = w
	}
}

// hbEven[b] and hbOdd[b] put 16 into lane i when bit 2i, respectively 2i+1,
// of b is set: the Q5 high bits of eight consecutive weights, in the lane
// order of the even-byte and odd-byte nibble words.
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
