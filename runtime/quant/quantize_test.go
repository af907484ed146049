package quant

import (
	"bytes"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
)

// TestQuantizeMatchesLlamaCpp re-quantizes the synth model's F32 source and
// requires byte-identical output to llama-quantize's, tensor by tensor.
// llama.cpp keeps the 1-D norm weights in F32, stores output.weight as Q6_K
// for the 4- and 5-bit legacy types, and mixes K-quant types within the
// K-quant files (Q4_K_M holds Q4_K and Q6_K, ...); every tensor's type is
// checked to be such a choice, and every quantized tensor is compared.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	ref := openModel(t, "synth-F32.gguf")
	kquant := map[ggml.Type]bool{ggml.Q2_K: true, ggml.Q3_K: true, ggml.Q4_K: true, ggml.Q5_K: true, ggml.Q6_K: true}
	for _, c := range []struct {
		file string
		typ  ggml.Type
	}{
		{"F16", ggml.F16}, {"BF16", ggml.BF16}, {"Q8_0", ggml.Q8_0},
		{"Q4_0", ggml.Q4_0}, {"Q4_1", ggml.Q4_1}, {"Q5_0", ggml.Q5_0}, {"Q5_1", ggml.Q5_1},
		{"Q2_K", ggml.Q2_K}, {"Q3_K_M", ggml.Q3_K}, {"Q4_K_M", ggml.Q4_K}, {"Q5_K_M", ggml.Q5_K}, {"Q6_K", ggml.Q6_K},
	} {
		t.Run(c.file, func(t *testing.T) {
			f := openModel(t, "synth-"+c.file+".gguf")
			compared := map[ggml.Type]int{}
			for i := range f.Tensors {
				tn := &f.Tensors[i]
				switch {
				case tn.Type == c.typ:
				case len(tn.Dims) == 1 && tn.Type == ggml.F32 && strings.HasSuffix(tn.Name, "norm.weight"):
					continue
				case tn.Name == "output.weight" && tn.Type == ggml.Q6_K && c.typ != ggml.Q8_0 && c.typ.Quantized():
				case kquant[c.typ] && kquant[tn.Type]:
				default:
					t.Fatalf("%s is %v: not a choice llama.cpp makes for %v", tn.Name, tn.Type, c.typ)
				}
				got, err := Quantize(tn.Type, f32Tensor(t, ref, tn.Name))
				if err != nil {
					t.Fatalf("%s: %v", tn.Name, err)
				}
				want := f.TensorData(tn)
				if !bytes.Equal(got, want) {
					n := 0
					for n < len(got) && got[n] == want[n] {
						n++
					}
					t.Errorf("%s (%v): %d of %d bytes differ from llama.cpp's, first at byte %d", tn.Name, tn.Type, countDiff(got, want), len(want), n)
					continue
				}
				compared[tn.Type]++
			}
			// 7 per layer, token_embd, and output.weight unless it is Q6_K
			if compared[c.typ] < 15 && !kquant[c.typ] || compared[c.typ] < 2 {
				t.Errorf("only %d %v tensors matched", compared[c.typ], c.typ)
			}
			t.Logf("byte-identical: %v", compared)
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

// TestQuantizeMXFP4MatchesLlamaCpp: llama-quantize's MXFP4_MOE file keeps
// every expert bank in MXFP4; quantizing the F32 file's banks must give
// its bytes exactly (scale exponent, nearest table entry, first of equals).
func TestQuantizeMXFP4MatchesLlamaCpp(t *testing.T) {
	ref := openModel(t, "2026/synth-qwen3moe-F32.gguf")
	f := openModel(t, "2026/synth-qwen3moe-MXFP4_MOE.gguf")
	compared := 0
	for i := range f.Tensors {
		tn := &f.Tensors[i]
		if tn.Type != ggml.MXFP4 {
			continue
		}
		got, err := Quantize(ggml.MXFP4, f32Tensor(t, ref, tn.Name))
		if err != nil {
			t.Fatalf("%s: %v", tn.Name, err)
		}
		if want := f.TensorData(tn); !bytes.Equal(got, want) {
			t.Errorf("%s: %d of %d bytes differ from llama.cpp's", tn.Name, countDiff(got, want), len(want))
		}
		compared++
	}
	if compared != 6 { // gate, up and down banks of 2 layers
		t.Errorf("compared %d MXFP4 tensors, want 6", compared)
	}
}
