//go:build cgo && amd64

package simd

/*
#cgo CFLAGS: -O3 -fno-strict-aliasing
#include "simd.h"
*/
import "C"

import (
	"os"
	"unsafe"
)

var level = func() int {
	l := int(C.vk_cpu_level())
	switch os.Getenv("VKCHAT_CPU_KERNELS") {
	case "portable":
		return 0
	case "avx2":
		return min(l, 1)
	}
	return l
}()

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(s))
}

// MatMul computes dst[v*dstStride+r] = row r · vector v for rows [r0, r1)
// and vectors [v0, v1) of a weight matrix of type typ (a ggml type id)
// whose rows are rowBytes apart in w, against activations in a's layout. It
// reports false, doing nothing, when there is no kernel for typ at this
// level. The caller guarantees the sizes (see quant.product).
func MatMul(typ int, w []byte, rowBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	if level == 0 {
		return false
	}
	ok := C.vk_mm(C.int(level), C.int(typ), (*C.uint8_t)(ptr(w)), C.int64_t(rowBytes), C.int64_t(r0), C.int64_t(r1),
		(*C.int8_t)(ptr(a.Qs)), (*C.float)(ptr(a.D)), (*C.float)(ptr(a.S)), (*C.int32_t)(ptr(a.Sums)), (*C.float)(ptr(a.F)),
		C.int64_t(a.N), C.int64_t(v0), C.int64_t(v1), (*C.float)(ptr(dst)), C.int64_t(dstStride), 0)
	return ok != 0
}

// MatMulInterleaved is MatMul for quantized weights whose rows are
// interleaved block by block in groups of 8 (groupBytes per group), rows
// [r0, r1) within the whole groups. It reports false when there is no
// kernel for typ (float types are never interleaved).
func MatMulInterleaved(typ int, w []byte, groupBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	if level == 0 {
		return false
	}
	ok := C.vk_mm(C.int(level), C.int(typ), (*C.uint8_t)(ptr(w)), C.int64_t(groupBytes), C.int64_t(r0), C.int64_t(r1),
		(*C.int8_t)(ptr(a.Qs)), (*C.float)(ptr(a.D)), (*C.float)(ptr(a.S)), (*C.int32_t)(ptr(a.Sums)), nil,
		C.int64_t(a.N), C.int64_t(v0), C.int64_t(v1), (*C.float)(ptr(dst)), C.int64_t(dstStride), 1)
	return ok != 0
}

// QuantizeQ8 converts x (a multiple of 32 long) to Q8_0 blocks, or Q8_1
// when s is not nil: quants qs, fp16-rounded scales d, quant sums and, for
// Q8_1, the fp16-rounded d*sum in s; bit-identical to the portable
// quantizer. It reports false when the level is 0.
func QuantizeQ8(x []float32, qs []int8, d []float32, sums []int32, s []float32) bool {
	if level == 0 {
		return false
	}
	C.vk_quant_q8_0(C.int(level), (*C.float)(ptr(x)), C.int64_t(len(x)), (*C.int8_t)(ptr(qs)), (*C.float)(ptr(d)),
		(*C.int32_t)(ptr(sums)), (*C.float)(ptr(s)))
	return true
}

// AttnKeyScores is MatMul of one vector (a's first) against len(dst) rows
// of a quantized type rowBytes apart in w, the same kernels and results,
// for a KV cache's key rows of one head (keyBytes each): rows read once
// and far apart, which it prefetches ahead. It reports false when there
// is no kernel for typ.
func AttnKeyScores(typ int, w []byte, rowBytes, keyBytes int, a *Acts, dst []float32) bool {
	if level == 0 {
		return false
	}
	if len(dst) == 0 {
		return true
	}
	_ = w[(len(dst)-1)*rowBytes+keyBytes-1]
	ok := C.vk_attn_key_scores(C.int(level), C.int(typ), (*C.uint8_t)(ptr(w)), C.int64_t(rowBytes), C.int64_t(len(dst)), C.int64_t(keyBytes),
		(*C.int8_t)(ptr(a.Qs)), (*C.float)(ptr(a.D)), (*C.float)(ptr(a.S)), (*C.int32_t)(ptr(a.Sums)), C.int64_t(a.N), (*C.float)(ptr(dst)))
	return ok != 0
}

// Has reports whether MatMul has a kernel for typ at this level.
func Has(typ int) bool { return level > 0 && C.vk_has(C.int(level), C.int(typ)) != 0 }

// ReadSum streams b (with 256-bit loads where the CPU has AVX2) and returns
// a checksum of it; its speed is the machine's read bandwidth as the
// kernels see it. Only whole 128-byte groups are read.
func ReadSum(b []byte) uint64 {
	if level == 0 {
		return readSumGo(b)
	}
	return uint64(C.vk_read_sum((*C.uint8_t)(ptr(b)), C.int64_t(len(b))))
}

// MatMulPacked is MatMul for Q4_0, Q8_0, MXFP4, Q4_K or Q5_K weights repacked in groups of 8
// rows (see packed.h; groupBytes is one group's size) over rows [r0, r1),
// both multiples of 8. It reports false when there is no such kernel.
func MatMulPacked(typ int, w []byte, groupBytes, r0, r1 int, a *Acts, v0, v1 int, dst []float32, dstStride int) bool {
	if level == 0 {
		return false
	}
	ok := C.vk_pm(C.int(level), C.int(typ), (*C.uint8_t)(ptr(w)), C.int64_t(groupBytes), C.int64_t(r0), C.int64_t(r1),
		(*C.int8_t)(ptr(a.Qs)), (*C.float)(ptr(a.D)), (*C.int32_t)(ptr(a.Sums)),
		C.int64_t(a.N), C.int64_t(v0), C.int64_t(v1), (*C.float)(ptr(dst)), C.int64_t(dstStride))
	return ok != 0
}

// RMSNorm is runtime/cpu's rmsNorm (w nil: no weight), bit for bit. It
// reports false when the level is 0.
func RMSNorm(out, x, w []float32, eps float32) bool {
	if level == 0 || len(x) == 0 {
		return level != 0
	}
	_ = out[len(x)-1]
	var wp *C.float
	if w != nil {
		_ = w[len(x)-1]
		wp = (*C.float)(ptr(w))
	}
	C.vk_rms_norm((*C.float)(ptr(out)), (*C.float)(ptr(x)), wp, C.int64_t(len(x)), C.float(eps))
	return true
}

// RMSNormRows is RMSNorm in place on each width-value row of x (len(x) a
// multiple of width), in one call. It reports false when the level is 0.
func RMSNormRows(x []float32, width int, w []float32, eps float32) bool {
	if level == 0 || width <= 0 || len(x) < width {
		return level != 0
	}
	var wp *C.float
	if w != nil {
		_ = w[width-1]
		wp = (*C.float)(ptr(w))
	}
	C.vk_rms_norm_rows((*C.float)(ptr(x)), wp, C.int64_t(width), C.int64_t(len(x)/width), C.float(eps))
	return true
}

// RopeRows is Rope on each width-value row of x (a token's heads), in one
// call. It reports false when the level is 0.
func RopeRows(x []float32, width int, c, s []float32, neox bool) bool {
	if level == 0 || len(c) == 0 || width <= 0 || len(x) < width {
		return level != 0
	}
	_, _ = x[width-1], s[len(c)-1]
	if 2*len(c) > width {
		panic("simd: RopeRows: rotation wider than a row")
	}
	n := C.int(0)
	if neox {
		n = 1
	}
	C.vk_rope_rows((*C.float)(ptr(x)), C.int64_t(width), C.int64_t(len(x)/width), (*C.float)(ptr(c)), (*C.float)(ptr(s)), C.int64_t(len(c)), n)
	return true
}

// Rope rotates the len(c) pairs of x by the angles whose cosines and sines
// are c and s, pairs adjacent or (neox) half the rotated width apart, as
// runtime/cpu's rope does, bit for bit. It reports false when the level
// is 0.
func Rope(x, c, s []float32, neox bool) bool {
	if level == 0 || len(c) == 0 {
		return level != 0
	}
	_, _ = x[2*len(c)-1], s[len(c)-1]
	n := C.int(0)
	if neox {
		n = 1
	}
	C.vk_rope((*C.float)(ptr(x)), (*C.float)(ptr(c)), (*C.float)(ptr(s)), C.int64_t(len(c)), n)
	return true
}

// DeltaStep is one token of the Gated DeltaNet delta rule on one value
// head's transposed state m (len(q)² floats), as runtime/cpu's portable
// deltaStep computes it, bit for bit. It reports false when the level is 0.
func DeltaStep(m, q, k, v, o []float32, decay, beta, scale float32) bool {
	S := len(q)
	if level == 0 || S == 0 {
		return level != 0
	}
	_, _, _, _ = m[S*S-1], k[S-1], v[S-1], o[S-1]
	C.vk_delta_step((*C.float)(ptr(m)), (*C.float)(ptr(q)), (*C.float)(ptr(k)), (*C.float)(ptr(v)), (*C.float)(ptr(o)),
		C.int64_t(S), C.float(decay), C.float(beta), C.float(scale))
	return true
}

// SSMScanHead is one token of the Mamba2 scan on one head: its len(x)
// rows of len(B) states (state, row-major), with decay dA and step dt,
// writing each row's dot with C to y, as runtime/cpu's portable scanRow
// computes it, bit for bit. It reports false when the level is 0.
func SSMScanHead(state, x, B, Cv, y []float32, dA, dt float32) bool {
	P, N := len(x), len(B)
	if level == 0 || P == 0 || N == 0 {
		return level != 0
	}
	_, _, _ = state[P*N-1], Cv[N-1], y[P-1]
	C.vk_ssm_scan_head((*C.float)(ptr(state)), (*C.float)(ptr(x)), (*C.float)(ptr(B)), (*C.float)(ptr(Cv)), (*C.float)(ptr(y)),
		C.int64_t(P), C.int64_t(N), C.float(dA), C.float(dt))
	return true
}

// CausalConv is one token of a depthwise causal conv over the len(in)
// channels: out[c] from in[c] and the K-1 older inputs in state
// ([K-1][C], oldest first) with the taps wt stored tap-major ([K][C]), as
// runtime/cpu's portable causalConv computes it, bit for bit (the state
// is left as it is). It reports false when the level is 0.
func CausalConv(out, state, in, wt []float32, K int) bool {
	n := len(in)
	if level == 0 || n == 0 || K < 1 {
		return level != 0
	}
	_, _, _ = out[n-1], wt[K*n-1], in[n-1]
	if K > 1 {
		_ = state[(K-1)*n-1]
	}
	C.vk_causal_conv((*C.float)(ptr(out)), (*C.float)(ptr(state)), (*C.float)(ptr(in)), (*C.float)(ptr(wt)), C.int64_t(n), C.int64_t(K))
	return true
}

// SwiGLU sets gate[i] = silu(gate[i]) * up[i] for every i, as
// runtime/cpu's portable swiglu computes it, bit for bit. It reports false when the level is 0.
func SwiGLU(gate, up []float32) bool {
	if level == 0 || len(gate) == 0 {
		return level != 0
	}
	_ = up[len(gate)-1]
	C.vk_swiglu((*C.float)(ptr(gate)), (*C.float)(ptr(up)), C.int64_t(len(gate)))
	return true
}

// AttnOnline is one query's softmax attention over span positions
// without a soft-cap, as runtime/cpu's portable attendOnline computes it,
// bit for bit (q already rounded to F16 when f16): keys and vals hold
// position t at t*len(q). work needs 3 floats and rescale 1 byte per
// position. It reports false when the level is 0.
func AttnOnline(q, keys, vals, out []float32, span int, scale float32, f16 bool, work []float32, rescale []uint8) bool {
	if level == 0 || span == 0 {
		return level != 0
	}
	hd := len(q)
	_, _ = keys[span*hd-1], vals[span*hd-1]
	return attnOnline(q, unsafe.Pointer(&keys[0]), unsafe.Pointer(&vals[0]), hd, 0, out, span, scale, f16, work, rescale)
}

// AttnOnlineF16 is AttnOnline reading F16 keys and values in place
// (widened on the fly, exactly as a widened copy), position t at
// t*stride halves: an F16 cache without a copy per step.
func AttnOnlineF16(q []float32, keys, vals []uint16, stride int, out []float32, span int, scale float32, f16 bool, work []float32, rescale []uint8) bool {
	if level == 0 || span == 0 {
		return level != 0
	}
	hd := len(q)
	_, _ = keys[(span-1)*stride+hd-1], vals[(span-1)*stride+hd-1]
	return attnOnline(q, unsafe.Pointer(&keys[0]), unsafe.Pointer(&vals[0]), stride, 1, out, span, scale, f16, work, rescale)
}

func attnOnline(q []float32, keys, vals unsafe.Pointer, stride, h int, out []float32, span int, scale float32, f16 bool, work []float32, rescale []uint8) bool {
	hd := len(q)
	_, _, _ = out[hd-1], work[3*span-1], rescale[span-1]
	f := C.int(0)
	if f16 {
		f = 1
	}
	C.vk_attn_online((*C.float)(ptr(q)), keys, vals, C.int64_t(stride), C.int(h), (*C.float)(ptr(out)), C.int64_t(hd),
		C.int64_t(span), C.float(scale), f, (*C.float)(ptr(work)), (*C.uint8_t)(ptr(rescale)))
	return true
}

// AttnScores sets scores[t] = q · keys[t*len(q):] for t < len(scores), as
// runtime/cpu's portable vecDot computes it, bit for bit. It reports false
// when the level is 0.
func AttnScores(q, keys, scores []float32) bool {
	if level == 0 || len(scores) == 0 {
		return level != 0
	}
	hd := len(q)
	_ = keys[len(scores)*hd-1]
	C.vk_attn_scores((*C.float)(ptr(q)), (*C.float)(ptr(keys)), C.int64_t(hd), C.int64_t(len(scores)), (*C.float)(ptr(scores)))
	return true
}

// AttnAccumulate runs the value side of online softmax over len(vs)
// positions, as runtime/cpu's portable attention does it, bit for bit: at
// step t, where rescale[t] != 0, out *= ms[t]; then out = fma(vals_t,
// vs[t], out); each result rounded to F16 when f16. It reports false when
// the level is 0.
func AttnAccumulate(out, vals, ms, vs []float32, rescale []uint8, f16 bool) bool {
	if level == 0 || len(vs) == 0 {
		return level != 0
	}
	hd := len(out)
	span := len(vs)
	_, _, _ = vals[span*hd-1], ms[span-1], rescale[span-1]
	h := C.int(0)
	if f16 {
		h = 1
	}
	C.vk_attn_accumulate((*C.float)(ptr(out)), (*C.float)(ptr(vals)), C.int64_t(hd), C.int64_t(span), (*C.float)(ptr(ms)),
		(*C.float)(ptr(vs)), (*C.uint8_t)(ptr(rescale)), h)
	return true
}

// F16ToF32 widens src into dst (len(dst) >= len(src)) with F16C; the
// values are exact, as in quant.FP16ToFP32 (signalling NaNs come out
// quiet). It reports false when the level is 0.
func F16ToF32(dst []float32, src []uint16) bool {
	if level == 0 {
		return false
	}
	_ = dst[:len(src)]
	C.vk_f16_to_f32((*C.float)(ptr(dst)), (*C.uint16_t)(ptr(src)), C.int64_t(len(src)))
	return true
}

// F32ToF16 narrows src into dst (len(dst) >= len(src)) with F16C,
// rounding to nearest even as quant.FP32ToFP16 does (NaN payloads aside).
// It reports false when the level is 0.
func F32ToF16(dst []uint16, src []float32) bool {
	if level == 0 || len(src) == 0 {
		return level != 0
	}
	_ = dst[:len(src)]
	C.vk_f32_to_f16((*C.uint16_t)(ptr(dst)), (*C.float)(ptr(src)), C.int64_t(len(src)))
	return true
}

// RoundF16 sets dst (len(dst) >= len(src)) to src rounded through F16, as
// F32ToF16 then F16ToF32 would. It reports false when the level is 0.
func RoundF16(dst, src []float32) bool {
	if level == 0 || len(src) == 0 {
		return level != 0
	}
	_ = dst[:len(src)]
	C.vk_round_f16((*C.float)(ptr(dst)), (*C.float)(ptr(src)), C.int64_t(len(src)))
	return true
}

// F16Rows widens rows rows of cols halves, stride halves apart in src, into
// dst (rows*cols floats), as F16ToF32 does per row, in one call.
func F16Rows(dst []float32, src []uint16, cols, stride, rows int) bool {
	if level == 0 || rows <= 0 {
		return level != 0
	}
	_, _ = dst[rows*cols-1], src[(rows-1)*stride+cols-1]
	C.vk_f16_rows((*C.float)(ptr(dst)), (*C.uint16_t)(ptr(src)), C.int64_t(cols), C.int64_t(stride), C.int64_t(rows))
	return true
}

// QuantizeQ8K converts x (a multiple of 256 long) to Q8_K: quants qs, one
// d per 256 and 16 bsums per 256, bit-identical to the portable quantizer.
// It reports false when the level is 0.
func QuantizeQ8K(x []float32, qs []int8, d []float32, bsums []int32) bool {
	if level == 0 {
		return false
	}
	nb := len(x) / 256
	if nb == 0 {
		return true
	}
	_, _, _ = qs[nb*256-1], d[nb-1], bsums[nb*16-1]
	C.vk_quant_q8_k((*C.float)(ptr(x)), C.int64_t(len(x)), (*C.int8_t)(ptr(qs)), (*C.float)(ptr(d)), (*C.int32_t)(ptr(bsums)))
	return true
}

// HasAttnValues reports whether AttnValues reads values of type vt (a ggml
// type id: F32, F16, Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1) for heads of hd.
func HasAttnValues(vt, hd int) bool {
	return level > 0 && C.vk_attn_values_has(C.int(vt), C.int64_t(hd)) != 0
}

// AttnValues folds len(sc) positions into a running online softmax, as
// runtime/cpu's portable online.add does on values already widened, bit
// for bit: scores sc times scale; values of type vt (HasAttnValues) for
// position t at vals[t*stride:], decoded in registers; state the running
// maximum and sum, out the running weighted sum (rounded to F16 after
// each step when f16). work needs 3 floats and rescale 1 byte per
// position. It reports false when there is no such kernel.
func AttnValues(sc []float32, scale float32, vals []byte, vt, stride int, out []float32, f16 bool, state *[2]float32, work []float32, rescale []uint8) bool {
	span, hd := len(sc), len(out)
	if !HasAttnValues(vt, hd) {
		return false
	}
	if span == 0 {
		return true
	}
	_, _ = work[3*span-1], rescale[span-1]
	rowBytes := hd * 4
	switch vt {
	case 1:
		rowBytes = hd * 2
	case 2:
		rowBytes = hd / 32 * 18
	case 3:
		rowBytes = hd / 32 * 20
	case 6:
		rowBytes = hd / 32 * 22
	case 7:
		rowBytes = hd / 32 * 24
	case 8:
		rowBytes = hd / 32 * 34
	}
	_ = vals[(span-1)*stride+rowBytes-1]
	h := C.int(0)
	if f16 {
		h = 1
	}
	C.vk_attn_values((*C.float)(ptr(sc)), C.int64_t(span), C.float(scale), (*C.uint8_t)(ptr(vals)), C.int(vt), C.int64_t(stride),
		(*C.float)(ptr(out)), C.int64_t(hd), h, (*C.float)(unsafe.Pointer(state)), (*C.float)(ptr(work)), (*C.uint8_t)(ptr(rescale)))
	return true
}
