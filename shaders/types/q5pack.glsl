// Q5_0's and Q5_1's weights as int8 lanes for the integer-dot mat-vec
// (matvec_id.comp, IDOT): the nibbles as in q4_0.glsl, with high bit i of
// weight i (u_qh) spread into bit 4 of its byte. Included by q5_0.glsl
// and q5_1.glsl, which declare u_qs and u_qh.

// spread4 moves bits 0..3 of h to bit 0 of bytes 0..3.
uint spread4(uint h) { return (h & 1u) | ((h & 2u) << 7) | ((h & 4u) << 14) | ((h & 8u) << 21); }

void q5_pack(out uint wq[8]) {
	[[unroll]] for (uint i = 0; i < 4; i++) {
		wq[i] = (u_qs[i] & 0x0F0F0F0Fu) | (spread4((u_qh >> (4u * i)) & 15u) << 4);
		wq[i + 4] = ((u_qs[i] >> 4) & 0x0F0F0F0Fu) | (spread4((u_qh >> (16u + 4u * i)) & 15u) << 4);
	}
}
