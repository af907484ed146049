package quant

// Q4_K block (144 bytes): fp16 d, fp16 dmin, 12 bytes of 6-bit scales and
// mins (k4Scales), 128 nibble bytes. In each 64-weight chunk c, byte l of
// qs[32c:] holds weight 64c+l in its low nibble and 64c+32+l in its high one.
// x = d*scale*q - dmin*min, one scale and min per 32 weights.
// Q5_K block (176 bytes): d, dmin, scales as Q4_K, 32 bytes qh, 128 nibble
// bytes; bit s of qh[l] is the fifth bit of weight 32s+l.

func dequantQ4K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[144]byte)(src[i*144:])
		y := (*[256]float32)(dst[i*256:])
		d, min := f16le(b[0:]), f16le(b[2:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			d1, m1 := float32(d*float32(sc[2*c])), float32(min*float32(mn[2*c]))
			d2, m2 := float32(d*float32(sc[2*c+1])), float32(min*float32(mn[2*c+1]))
			for l := 0; l < 32; l++ {
				y[64*c+l] = float32(d1*float32(q[l]&15)) - m1
				y[64*c+32+l] = float32(d2*float32(q[l]>>4)) - m2
			}
		}
	}
}

func dequantQ5K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[176]byte)(src[i*176:])
		y := (*[256]float32)(dst[i*256:])
		d, min := f16le(b[0:]), f16le(b[2:])
		sc, mn := k4Scales((*[12]byte)(b[4:]))
		qh := (*[32]byte)(b[16:])
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			d1, m1 := float32(d*float32(sc[2*c])), float32(min*float32(mn[2*c]))
			d2, m2 := float32(d*float32(sc[2*c+1])), float32(min*float32(mn[2*c+1]))
			for l := 0; l < 32; l++ {
				v1 := q[l]&15 | qh[l]>>(2*c)&1<<4
				v2 := q[l]>>4 | qh[l]>>(2*c+1)&1<<4
				y[64*c+l] = float32(d1*float32(v1)) - m1
				y[64*c+32+l] = float32(d2*float32(v2)) - m2
			}
		}
	}
}

// minSum is sum_j bsums[j]*min[j/2], the integer that carries the mins.
func minSum(bs *[16]int32, mn *[8]uint8) int32 {
	var s int32
	for j := 0; j < 16; j++ {
		s += bs[j] * int32(mn[j/2])
	}
	return s
}

// The K-quant kernels compute exactly ggml's integer sums. ggml's generic
// code spreads each super-block's sum over eight float lanes by position
// modulo 8 and adds the lanes at the end; packing weights into words mixes
// positions, so here each super-block's integer sum is scaled and added
// directly, as ggml's generic Q2_K kernel does. The float results differ
// from the generic kernel's only in rounding (about 1e-7 relative), the same
// order by which ggml's own SIMD kernels differ from it. Where llama.cpp's
// references were measured to follow its AVX2 vec_dot kernel's lanes, the
// kernel does too (dotQ5K); Q6_K stays per super-block and Q4_K follows
// the repacked gemv (dotQ4K), which those references match.

// dotQ4K is ggml_gemv_q4_K_8x8_q8_K's order, the kernel llama.cpp's x86
// CPU backend runs for Q4_K weights repacked in groups of 8 rows: per
// super-block the exact integers S (the scaled quants' dot) and M (the
// mins' against the sub-block sums) each go to their own float32
// accumulator with one FMA, times dy·dx and dy·dmin, and the row is the
// first accumulator minus the second. A row of one super-block rounds as
// (dy·dx)·S − (dy·dmin)·M; summing wider rows' super-blocks that way
// instead parts from it in the last bits.
//
// llama.cpp multiplies a batch's activations in groups of four with
// ggml_gemm_q4_K_8x8_q8_K instead (the rest, and MUL_MAT_ID's expert
// rows, with the gemv), which FMAs each sub-block pair's (64 elements')
// integers in turn. Measured with that split followed row by row, the
// 2026 and 2026b Q4_K_M dumps match far closer (gemma4 and qwen3moe to
// 5e-6 at every position, mistral3 everywhere but the prompt's last row,
// gemma4moe through its first 31 positions), and with the pair order for
// every row instead, decode steps part from them by up to 3.4 (gemma4).
// A product here gives the same bits in a batch and alone (see
// Matrix.RowByRow), so it keeps the gemv's order throughout.
func dotQ4K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, py, bsums := row[:nb*144], a.py[:nb*64], a.sums[:nb*16]
	var accS, accM float32
	for _, yd := range a.d {
		b := (*[144]byte)(row)
		y := (*[64]uint64)(py)
		bs := (*[16]int32)(bsums)
		row, py, bsums = row[144:], py[64:], bsums[16:]
		sc, mn := k4Scales((*[12]byte)(b[4:16]))
		var isum int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			yc := (*[16]uint64)(y[16*c:])
			w0, w1, w2, w3 := le64(q[0:8]), le64(q[8:16]), le64(q[16:24]), le64(q[24:32])
			lo := lane3((w0&lane4)*yc[0]+(w0>>8&lane4)*yc[1]+(w1&lane4)*yc[2]+(w1>>8&lane4)*yc[3]) +
				lane3((w2&lane4)*yc[4]+(w2>>8&lane4)*yc[5]+(w3&lane4)*yc[6]+(w3>>8&lane4)*yc[7])
			hi := lane3((w0>>4&lane4)*yc[8]+(w0>>12&lane4)*yc[9]+(w1>>4&lane4)*yc[10]+(w1>>12&lane4)*yc[11]) +
				lane3((w2>>4&lane4)*yc[12]+(w2>>12&lane4)*yc[13]+(w3>>4&lane4)*yc[14]+(w3>>12&lane4)*yc[15])
			isum += int32(sc[2*c])*lo + int32(sc[2*c+1])*hi
		}
		d, dmin := f16le(b[0:2])*yd, f16le(b[2:4])*yd
		accS = FMA32(d, float32(isum), accS)
		accM = FMA32(dmin, float32(minSum(bs, &mn)), accM)
	}
	return accS - accM
}

// dotQ4KLanes is ggml_vec_dot_q4_K_q8_K as ggml-cpu's x86 AVX2 build
// computes it, for a Matrix.VecDot product (dotQ4K, the repacked gemv's
// order, is the one the others follow): per super-block, the scaled integer products summed in
// eight lanes (lane t: the elements whose position within their 32 is
// 4t..4t+3), each lane times dy·dx added to its own float32 lane with one
// FMA; the mins' integers in four lanes (sub-block pairs) likewise times
// −dy·dmin; at the end hsum_float_8 of the first plus (m0+m2)+(m1+m3).
func dotQ4KLanes(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, qs, bsums := row[:nb*144], a.qs[:nb*256], a.sums[:nb*16]
	var acc [8]float32
	var accm [4]float32
	for _, yd := range a.d {
		b := (*[144]byte)(row)
		y := (*[256]int8)(qs)
		bs := (*[16]int32)(bsums)
		row, qs, bsums = row[144:], qs[256:], bsums[16:]
		sc, mn := k4Scales((*[12]byte)(b[4:16]))
		lanes := kLanes((*[128]byte)(b[16:144]), nil, y, &sc)
		d, dmin := yd*f16le(b[0:2]), -yd*f16le(b[2:4])
		for t, s := range lanes {
			acc[t] = FMA32(d, float32(s), acc[t])
		}
		for p := range accm {
			m := int32(mn[2*p])*(bs[4*p]+bs[4*p+1]) + int32(mn[2*p+1])*(bs[4*p+2]+bs[4*p+3])
			accm[p] = FMA32(dmin, float32(m), accm[p])
		}
	}
	return hsum8(&acc) + ((accm[0] + accm[2]) + (accm[1] + accm[3]))
}

// kLanes is a Q4_K or Q5_K super-block's scaled integer products against
// y summed in ggml's eight AVX2 lanes (lane t: the elements whose position
// within their 32 is 4t..4t+3): q holds the low nibbles, qh, for Q5_K,
// the fifth bits (nil for Q4_K), sc the sub-blocks' scales. The sums are
// exact integers, so the order within a lane is free.
func kLanes(q *[128]byte, qh *[32]byte, y *[256]int8, sc *[8]uint8) (lanes [8]int32) {
	for c := 0; c < 4; c++ {
		qc := (*[32]byte)(q[32*c:])
		lo, hi := (*[32]int8)(y[64*c:]), (*[32]int8)(y[64*c+32:])
		sl, sh := int32(sc[2*c]), int32(sc[2*c+1])
		for l := range qc {
			v1, v2 := int32(qc[l]&15), int32(qc[l]>>4)
			if qh != nil {
				v1 |= int32(qh[l]>>(2*c)&1) << 4
				v2 |= int32(qh[l]>>(2*c+1)&1) << 4
			}
			lanes[l/4] += sl*v1*int32(lo[l]) + sh*v2*int32(hi[l])
		}
	}
	return lanes
}

// q5k returns the 5-bit weights of one nibble word: the low (lo) or high
// (hi) nibbles of 8 consecutive quant bytes, topped by bit s of the
// matching qh bytes (hw), split into even and odd lanes.
func q5k(w, hw uint64, s uint) (ev, od uint64) {
	return w&lane4 | (hw>>(s&63)&ones16)<<4, w>>8&lane4 | (hw>>((s+8)&63)&ones16)<<4
}

// dotQ5K is ggml_vec_dot_q5_K_q8_K as ggml-cpu's x86 AVX2 build computes
// it (see dotQ8_0), unlike dotQ4K: per super-block, the scaled integer
// products summed in eight lanes (lane t: the elements whose position
// within their 32 is 4t..4t+3), each lane times dy·dx added to its own
// float32 lane with one FMA; the mins' integer whole, summs = fma(−dy·dmin,
// it, summs); at the end hsum_float_8 plus summs. Summed per super-block,
// synth-Q5_K_M parted from llama.cpp at position 5 and synth-Q3_K_M (its
// Q5_K rows) at 19; this way both match at every position.
func dotQ5K(row []byte, a *actView) float32 {
	nb := len(a.d)
	row, qs, bsums := row[:nb*176], a.qs[:nb*256], a.sums[:nb*16]
	var acc [8]float32
	var summs float32
	for _, yd := range a.d {
		b := (*[176]byte)(row)
		y := (*[256]int8)(qs)
		bs := (*[16]int32)(bsums)
		row, qs, bsums = row[176:], qs[256:], bsums[16:]
		sc, mn := k4Scales((*[12]byte)(b[4:16]))
		lanes := kLanes((*[128]byte)(b[48:176]), (*[32]byte)(b[16:48]), y, &sc)
		d, dmin := yd*f16le(b[0:2]), -yd*f16le(b[2:4])
		for t, s := range lanes {
			acc[t] = FMA32(d, float32(s), acc[t])
		}
		summs = FMA32(dmin, float32(minSum(bs, &mn)), summs)
	}
	return hsum8(&acc) + summs
}
