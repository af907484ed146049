package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/quant"
	"vkchat/runtime/simd"
)

// TestAttendNativeMatchesPortable checks the native attention loops bit for
// bit against attendOnline's portable ones: head sizes with and without a
// tail past the 32-wide blocks, spans of one to many positions, F16 and F32
// accumulation, with and without a soft-cap, and scores that set a new
// maximum late (a rescale mid-way).
func TestAttendNativeMatchesPortable(t *testing.T) {
	if simd.Level() == 0 {
		t.Skip("no native kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, hd := range []int{8, 48, 64, 80, 128} {
		for _, span := range []int{1, 2, 7, 33, 200} {
			for _, f16 := range []bool{true, false} {
				for _, softcap := range []float32{0, 30} {
					for _, rising := range []bool{false, true} {
						q := make([]float32, hd)
						keys := make([]float32, span*hd)
						vals := make([]float32, span*hd)
						for i := range q {
							q[i] = float32(r.NormFloat64())
						}
						for i := range keys {
							keys[i] = float32(r.NormFloat64())
							vals[i] = float32(r.NormFloat64())
						}
						if span > 3 {
							for i := 0; i < hd; i++ {
								keys[(span-2)*hd+i] = 4 * q[i] // a late maximum
							}
						}
						if rising {
							// every position a new maximum: a rescale of out
							// and of the sum at each step
							for p := 0; p < span; p++ {
								for i := 0; i < hd; i++ {
									keys[p*hd+i] = q[i] * (0.3 + float32(p)*0.01*float32(r.Float64()+0.5))
								}
							}
						}
						scale := float32(1 / math.Sqrt(float64(hd)))
						got, want := make([]float32, hd), make([]float32, hd)
						attendOnline(q, keys, vals, got, span, scale, softcap, make([]float32, hd), f16)
						nativeAttention = false
						attendOnline(q, keys, vals, want, span, scale, softcap, make([]float32, hd), f16)
						nativeAttention = true
						for d := range got {
							if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
								t.Fatalf("hd %d span %d f16 %v softcap %g rising %v: out[%d] native %g, portable %g", hd, span, f16, softcap, rising, d, got[d], want[d])
							}
						}
						if f16 && softcap == 0 {
							// the F16 cache read in place, positions a
							// cache row (3 heads here) apart: the same
							// bits as the portable attention over the
							// widened keys and values
							const stride = 3
							k16, v16 := make([]uint16, span*stride*hd), make([]uint16, span*stride*hd)
							kw, vw := make([]float32, span*hd), make([]float32, span*hd)
							for p := 0; p < span; p++ {
								for i := 0; i < hd; i++ {
									k16[p*stride*hd+hd+i] = quant.FP32ToFP16(keys[p*hd+i])
									v16[p*stride*hd+hd+i] = quant.FP32ToFP16(vals[p*hd+i])
									kw[p*hd+i] = quant.FP16ToFP32(k16[p*stride*hd+hd+i])
									vw[p*hd+i] = quant.FP16ToFP32(v16[p*stride*hd+hd+i])
								}
							}
							cached, portable := make([]float32, hd), make([]float32, hd)
							attendCached(q, k16[hd:], v16[hd:], stride*hd, cached, span, scale, make([]float32, hd))
							nativeAttention = false
							attendOnline(q, kw, vw, portable, span, scale, 0, make([]float32, hd), true)
							nativeAttention = true
							for d := range cached {
								if math.Float32bits(cached[d]) != math.Float32bits(portable[d]) {
									t.Fatalf("hd %d span %d rising %v: out[%d] in place %g, portable %g", hd, span, rising, d, cached[d], portable[d])
								}
							}
						}
					}
				}
			}
		}
	}
}
