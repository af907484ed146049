package quant

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
)

// maxRelRMS bounds ||dequant(q) - x|| / ||x|| per tensor for llama.cpp's
// quantization of the synth model's seeded random weights. Each bound is
// about 15% above the worst tensor a correct decoder measures (logged by the
// test), and far below what a wrong layout gives: a swapped nibble half,
// bit plane or element order makes the error comparable to the signal
// (> 100%), and a scale or min taken from the wrong sub-block adds well
// over the 15% headroom.
var maxRelRMS = map[ggml.Type]float64{
	ggml.F16:  0.00025, // measured 0.00021: an 11-bit significand
	ggml.BF16: 0.0020,  // 0.00167: an 8-bit significand
	ggml.Q8_0: 0.0062,  // 0.00541
	ggml.Q6_K: 0.0205,  // 0.01782
	ggml.Q5_0: 0.049,   // 0.04286
	ggml.Q5_1: 0.044,   // 0.03808
	ggml.Q5_K: 0.042,   // 0.03636
	ggml.Q4_0: 0.100,   // 0.08680
	ggml.Q4_1: 0.090,   // 0.07861
	ggml.Q4_K: 0.082,   // 0.07160
	ggml.Q3_K: 0.175,   // 0.15150
	ggml.Q2_K: 0.34,    // 0.29804
}

func relRMS(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}

// TestDequantizeAgainstF32 decodes every tensor of every llama.cpp-quantized
// synth file and compares it with the unquantized source tensor.
func TestDequantizeAgainstF32(t *testing.T) {
	ref := openModel(t, "synth-F32.gguf")
	worst := map[ggml.Type]float64{}
	for _, name := range synthFiles {
		f := openModel(t, "synth-"+name+".gguf")
		for i := range f.Tensors {
			tn := &f.Tensors[i]
			want := f32Tensor(t, ref, tn.Name)
			got := make([]float32, tn.Elements())
			if err := Dequantize(tn.Type, f.TensorData(tn), got); err != nil {
				t.Fatalf("%s %s: %v", name, tn.Name, err)
			}
			e := relRMS(got, want)
			if tn.Type == ggml.F32 {
				if e != 0 {
					t.Errorf("%s %s: F32 tensor differs from the source (rel RMS %g)", name, tn.Name, e)
				}
				continue
			}
			worst[tn.Type] = max(worst[tn.Type], e)
			if bound, ok := maxRelRMS[tn.Type]; !ok {
				t.Errorf("%s %s: no bound for %v", name, tn.Name, tn.Type)
			} else if e > bound {
				t.Errorf("%s %s (%v): rel RMS error %.5f > %.5f", name, tn.Name, tn.Type, e, bound)
			}
		}
	}
	var b strings.Builder
	for _, ty := range []ggml.Type{ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q6_K, ggml.Q5_0, ggml.Q5_1, ggml.Q5_K, ggml.Q4_0, ggml.Q4_1, ggml.Q4_K, ggml.Q3_K, ggml.Q2_K} {
		fmt.Fprintf(&b, " %v=%.5f", ty, worst[ty])
	}
	t.Logf("worst rel RMS per type:%s", b.String())
}

// TestDequantizeErrors feeds every type short, misaligned and empty buffers:
// each must return an error (or succeed when the input is complete), never
// panic.
func TestDequantizeErrors(t *testing.T) {
	for _, typ := range allTypes {
		f := formats[typ]
		for _, c := range []struct {
			name     string
			srcBytes int
			elems    int
			ok       bool
		}{
			{"exact", 2 * f.bytes, 2 * f.elems, true},
			{"extra source bytes", 2*f.bytes + 7, 2 * f.elems, true},
			{"empty", 0, 0, true},
			{"one byte short", 2*f.bytes - 1, 2 * f.elems, false},
			{"no source", 0, f.elems, false},
			{"half a block", 2 * f.bytes, f.elems + f.elems/2, f.elems == 1},
		} {
			src := make([]byte, c.srcBytes)
			dst := make([]float32, c.elems)
			err := Dequantize(typ, src, dst)
			if (err == nil) != c.ok {
				t.Errorf("%v %s (%d bytes, %d elements): err = %v, want ok=%v", typ, c.name, c.srcBytes, c.elems, err, c.ok)
			}
		}
	}
	if err := Dequantize(ggml.Q8_1, make([]byte, 36), make([]float32, 32)); err == nil {
		t.Error("Q8_1 is an activation format here: want an error")
	}
	if err := Dequantize(ggml.Type(99), nil, nil); err == nil {
		t.Error("unknown type: want an error")
	}
	// every length combination up to three blocks, for every type
	for _, typ := range allTypes {
		f := formats[typ]
		for n := 0; n <= 3*f.bytes; n += max(1, f.bytes/5) {
			for e := 0; e <= 3*f.elems; e += max(1, f.elems/4) {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%v: Dequantize(%d bytes, %d elements) panicked: %v", typ, n, e, r)
						}
					}()
					_ = Dequantize(typ, make([]byte, n), make([]float32, e))
				}()
			}
		}
	}
}
