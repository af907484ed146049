package quant

import (
	"bytes"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
)

// TestQuantizeMatchesLlamaCpp re-quantizes the synth model's F32 source and
// requires byte-identical output to llama-quantize's, tensor by tensor.
// llama.cpp keeps the 1-D norm weights in F32 and, for the 4- and 5-bit
// legacy types, stores output.weight as Q6_K; those tensors are checked to
// be what llama.cpp chose and are compared only when we can quantize them.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	ref := openModel(t, "synth-F32.gguf")
	for _, c := range []struct {
		file string
		typ  ggml.Type
	}{
		{"F16", ggml.F16}, {"BF16", ggml.BF16}, {"Q8_0", ggml.Q8_0},
		{"Q4_0", ggml.Q4_0}, {"Q4_1", ggml.Q4_1}, {"Q5_0", ggml.Q5_0}, {"Q5_1", ggml.Q5_1},
	} {
		t.Run(c.file, func(t *testing.T) {
			f := openModel(t, "synth-"+c.file+".gguf")
			compared := 0
			for i := range f.Tensors {
				tn := &f.Tensors[i]
				want := f.TensorData(tn)
				switch {
				case tn.Type == c.typ:
				case len(tn.Dims) == 1 && tn.Type == ggml.F32 && strings.HasSuffix(tn.Name, "norm.weight"):
				case tn.Name == "output.weight" && tn.Type == ggml.Q6_K && c.typ != ggml.Q8_0 && c.typ.Quantized():
				default:
					t.Fatalf("%s is %v: not a choice llama.cpp makes for %v", tn.Name, tn.Type, c.typ)
				}
				got, err := Quantize(tn.Type, f32Tensor(t, ref, tn.Name))
				if err != nil {
					if tn.Type == c.typ || tn.Type == ggml.F32 {
						t.Fatalf("%s: %v", tn.Name, err)
					}
					continue
				}
				if !bytes.Equal(got, want) {
					n := 0
					for n < len(got) && got[n] == want[n] {
						n++
					}
					t.Errorf("%s (%v): %d bytes differ from llama.cpp's, first at byte %d", tn.Name, tn.Type, countDiff(got, want), n)
					continue
				}
				if tn.Type == c.typ {
					compared++
				}
			}
			if compared < 15 { // 7 per layer, token_embd, and output.weight unless it is Q6_K
				t.Errorf("only %d %v tensors compared", compared, c.typ)
			}
		})
	}
}

func countDiff(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

func TestQuantizeErrors(t *testing.T) {
	if _, err := Quantize(ggml.Q8_0, make([]float32, 33)); err == nil {
		t.Error("Q8_0 of 33 elements: want an error")
	}
	if _, err := Quantize(ggml.Q8_1, make([]float32, 32)); err == nil {
		t.Error("Q8_1 is not a storage type here: want an error")
	}
	if _, err := Quantize(ggml.I32, make([]float32, 32)); err == nil {
		t.Error("I32: want an error")
	}
	got, err := Quantize(ggml.Q4_0, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Quantize(Q4_0, nil) = %d bytes, %v; want 0, nil", len(got), err)
	}
}
