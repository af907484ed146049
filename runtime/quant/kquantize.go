package quant

import (
	"encoding/binary"
	"math"
)

// The K-quant reference quantizers, transcribed from ggml-quants.c
// (quantize_row_q*_K_ref and their helpers make_qx_quants, make_q3_quants
// and make_qkx2_quants). They search for scales by trial, so results are
// only reproducible if every float operation rounds as ggml's does: each
// product and sum below is rounded to float32 on its own, in ggml's order.

const groupMaxEps = 1e-15

func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// makeQxQuants is make_qx_quants with rmse_type 1 and no importance
// weights (the weight of x is x*x), as quantize_row_q6_K_ref uses it.
func makeQxQuants(nmax int32, x []float32, L []int8) float32 {
	var max, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range L[:len(x)] {
			L[i] = 0
		}
		return 0
	}
	clamp := func(l int32) int32 { return max32(-nmax, min32(nmax-1, l)) }
	sums := func(iscale float32) (sumlx, suml2 float32) {
		for _, v := range x {
			l := float32(clamp(nearestInt(float32(iscale * v))))
			w := float32(v * v)
			sumlx += float32(float32(w*v) * l)
			suml2 += float32(float32(w*l) * l)
		}
		return
	}
	iscale := float32(-nmax) / max
	for i, v := range x {
		L[i] = int8(clamp(nearestInt(float32(iscale*v))) + nmax)
	}
	sumlx, suml2 := sums(iscale)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := int32(-9); is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / max
		sumlx, suml2 = sums(iscale)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(clamp(nearestInt(float32(iscale*v))) + nmax)
			}
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse set, as quantize_row_q3_K_ref
// uses it.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	var max, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, max = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range L[:len(x)] {
			L[i] = 0
		}
		return 0
	}
	clamp := func(l int32) int32 { return max32(-nmax, min32(nmax-1, l)) }
	iscale := float32(-nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(float32(iscale * v)))
		L[i] = int8(l)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				nl := clamp(nearestInt(float32(v*sl2) / slx))
				if nl != int32(L[i]) {
					fl := float32(nl)
					slx += float32(float32(w*v) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQkx2Quants is make_qkx2_quants: an asymmetric (scale, min) fit of x
// to 0..nmax under weights w, refined over nstep+1 trial scales. It returns
// the scale and the (positive) min.
func makeQkx2Quants(nmax int32, x, w []float32, L, Laux []uint8, rmin, rdelta float32, nstep int32, useMad bool) (float32, float32) {
	n := len(x)
	min, max := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		for i := range L[:n] {
			L[i] = 0
		}
		return 0, -min
	}
	errOf := func(d float32) float32 {
		if useMad {
			return abs32(d)
		}
		return float32(d * d)
	}
	fn := float32(nmax)
	iscale := fn / float32(max-min)
	scale := 1 / iscale
	var bestError float32
	for i := range x[:n] {
		l := max32(0, min32(nmax, nearestInt(float32(iscale*float32(x[i]-min)))))
		L[i] = uint8(l)
		diff := float32(float32(float32(scale*float32(l))+min) - x[i])
		bestError += float32(w[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := int32(0); is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fn) / float32(max-min)
		var sumL, sumL2, sumXL float32
		for i := range x[:n] {
			l := max32(0, min32(nmax, nearestInt(float32(iscale*float32(x[i]-min)))))
			Laux[i] = uint8(l)
			fl := float32(l)
			sumL += float32(w[i] * fl)
			sumL2 += float32(float32(w[i]*fl) * fl)
			sumXL += float32(float32(w[i]*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := float32(float32(sumW*sumXL)-float32(sumX*sumL)) / D
			thisMin := float32(float32(sumL2*sumX)-float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range x[:n] {
				diff := float32(float32(float32(thisScale*float32(Laux[i]))+thisMin) - x[i])
				curError += float32(w[i] * errOf(diff))
			}
			if curError < bestError {
				copy(L[:n], Laux[:n])
				bestError = curError
				scale, min = thisScale, thisMin
			}
		}
	}
	return scale, -min
}

func min32(a, b int32) int32 {
	if a < b {
		return a
	}
	return b
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, FP32ToFP16(f)) }

// packQ2 packs 256 2-bit values the Q2_K/Q3_K way: byte l of each 128-weight
// half holds weights l, l+32, l+64, l+96 at bit offsets 0, 2, 4, 6.
func packQ2(qs []byte, L *[256]uint8) {
	for j := 0; j < 256; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

func quantizeQ2K(src []float32, dst []byte) {
	var L, Laux [256]uint8
	var weights [16]float32
	var scales, mins [16]float32
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := (*[84]byte)(dst[i*84:])
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			for l := 0; l < 16; l++ {
				weights[l] = abs32(x[16*j+l])
			}
			scales[j], mins[j] = makeQkx2Quants(3, x[16*j:16*j+16], weights[:], L[16*j:], Laux[:], -0.5, 0.1, 15, true)
			maxScale = max(maxScale, scales[j])
			maxMin = max(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := 0; j < 16; j++ {
				b[j] = uint8(nearestInt(float32(iscale * scales[j])))
			}
			putF16(b[80:], maxScale/15)
		} else {
			for j := 0; j < 16; j++ {
				b[j] = 0
			}
			putF16(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := 0; j < 16; j++ {
				b[j] |= uint8(nearestInt(float32(iscale*mins[j])) << 4)
			}
			putF16(b[82:], maxMin/15)
		} else {
			putF16(b[82:], 0)
		}
		dd, dm := f16le(b[80:82]), f16le(b[82:84])
		for j := 0; j < 16; j++ {
			d := float32(dd * float32(b[j]&0xf))
			if d == 0 {
				continue
			}
			m := float32(dm * float32(b[j]>>4))
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(float32(x[16*j+ii]+m) / d)
				L[16*j+ii] = uint8(max32(0, min32(3, l)))
			}
		}
		packQ2(b[16:80], &L)
	}
}

func quantizeQ3K(src []float32, dst []byte) {
	var L [256]int8
	var scales [16]float32
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := (*[110]byte)(dst[i*110:])
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		sb := b[96:108]
		clear(sb)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := int32(int8(nearestInt(float32(iscale * scales[j]))))
				l = max32(-32, min32(31, l)) + 32
				if j < 8 {
					sb[j] = byte(l & 0xf)
				} else {
					sb[j-8] |= byte(l&0xf) << 4
				}
				sb[j%4+8] |= byte(l>>4) << (2 * (j / 4))
			}
			putF16(b[108:], 1/iscale)
		} else {
			putF16(b[108:], 0)
		}
		sc := q3Scales((*[12]byte)(sb))
		dd := f16le(b[108:110])
		for j := 0; j < 16; j++ {
			d := float32(dd * float32(sc[j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(max32(-4, min32(3, l)) + 4)
			}
		}
		hm := b[0:32]
		clear(hm)
		var U [256]uint8
		for j := 0; j < 256; j++ {
			v := uint8(L[j])
			if v > 3 {
				hm[j%32] |= 1 << (j / 32)
				v -= 4
			}
			U[j] = v
		}
		packQ2(b[32:96], &U)
	}
}

// k4Fit runs the Q4_K/Q5_K sub-block fits and quantizes their scales and
// mins into the shared 12-byte format; it returns the super-block d and dmin.
func k4Fit(x []float32, nmax int32, rmin, rdelta float32, nstep int32, L *[256]uint8, sb []byte) (float32, float32) {
	var Laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQkx2Quants(nmax, xs, weights[:], L[32*j:], Laux[:], rmin, rdelta, nstep, false)
		maxScale = max(maxScale, scales[j])
		maxMin = max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
		if j < 4 {
			sb[j], sb[j+4] = ls, lm
		} else {
			sb[j+4] = ls&0xf | lm&0xf<<4
			sb[j-4] |= ls >> 4 << 6
			sb[j] |= lm >> 4 << 6
		}
	}
	return maxScale / 63, maxMin / 63
}

// k4Requant recomputes each weight's level from the stored (rounded) scales.
func k4Requant(x []float32, nmax int32, dd, dm float32, sb *[12]byte, L *[256]uint8) {
	sc, mn := k4Scales(sb)
	for j := 0; j < 8; j++ {
		d := float32(dd * float32(sc[j]))
		if d == 0 {
			continue
		}
		m := float32(dm * float32(mn[j]))
		for ii := 0; ii < 32; ii++ {
			l := nearestInt(float32(x[32*j+ii]+m) / d)
			L[32*j+ii] = uint8(max32(0, min32(nmax, l)))
		}
	}
}

func quantizeQ4K(src []float32, dst []byte) {
	var L [256]uint8
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := (*[144]byte)(dst[i*144:])
		clear(b[4:16])
		d, dmin := k4Fit(x, 15, -1, 0.1, 20, &L, b[4:16])
		putF16(b[0:], d)
		putF16(b[2:], dmin)
		k4Requant(x, 15, f16le(b[0:2]), f16le(b[2:4]), (*[12]byte)(b[4:16]), &L)
		for j := 0; j < 256; j += 64 {
			for l := 0; l < 32; l++ {
				b[16+j/2+l] = L[j+l] | L[j+l+32]<<4
			}
		}
	}
}

func quantizeQ5K(src []float32, dst []byte) {
	var L [256]uint8
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := (*[176]byte)(dst[i*176:])
		clear(b[4:16])
		d, dmin := k4Fit(x, 31, -0.5, 0.1, 15, &L, b[4:16])
		putF16(b[0:], d)
		putF16(b[2:], dmin)
		k4Requant(x, 31, f16le(b[0:2]), f16le(b[2:4]), (*[12]byte)(b[4:16]), &L)
		qh, ql := b[16:48], b[48:176]
		clear(qh)
		m1, m2 := byte(1), byte(2)
		for n := 0; n < 256; n += 64 {
			for j := 0; j < 32; j++ {
				l1, l2 := L[n+j], L[n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[n/2+j] = l1 | l2<<4
			}
			m1, m2 = m1<<2, m2<<2
		}
	}
}

func quantizeQ6K(src []float32, dst []byte) {
	var L [256]int8
	var scales [16]float32
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := (*[210]byte)(dst[i*210:])
		var maxScale, maxAbs float32
		for ib := 0; ib < 16; ib++ {
			scales[ib] = makeQxQuants(32, x[16*ib:16*ib+16], L[16*ib:])
			if a := abs32(scales[ib]); a > maxAbs {
				maxAbs, maxScale = a, scales[ib]
			}
		}
		if maxAbs < groupMaxEps {
			clear(b[:])
			continue
		}
		iscale := -128 / maxScale
		putF16(b[208:], 1/iscale)
		for ib := 0; ib < 16; ib++ {
			b[192+ib] = byte(int8(min32(127, nearestInt(float32(iscale*scales[ib])))))
		}
		dd := f16le(b[208:210])
		for j := 0; j < 16; j++ {
			d := float32(dd * float32(int8(b[192+j])))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(max32(-32, min32(31, l)) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql, qh, Lh := b[64*h:64*h+64], b[128+32*h:160+32*h], L[128*h:]
			for l := 0; l < 32; l++ {
				q1, q2 := byte(Lh[l])&0xf, byte(Lh[l+32])&0xf
				q3, q4 := byte(Lh[l+64])&0xf, byte(Lh[l+96])&0xf
				ql[l], ql[l+32] = q1|q3<<4, q2|q4<<4
				qh[l] = byte(Lh[l])>>4 | byte(Lh[l+32])>>4<<2 | byte(Lh[l+64])>>4<<4 | byte(Lh[l+96])>>4<<6
			}
		}
	}
}
