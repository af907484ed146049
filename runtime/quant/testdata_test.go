package quant

import (
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// synthFiles are the llama.cpp-quantized copies of synth-F32.gguf.
var synthFiles = []string{"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K"}

func openModel(t testing.TB, name string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(testenv.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// f32Tensor reads a tensor of synth-F32 as floats, through the F32 decoder
// only, so a bug in another type cannot hide in the reference.
func f32Tensor(t testing.TB, f *gguf.File, name string) []float32 {
	t.Helper()
	tn, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("%s: no tensor %s", f.Path, name)
	}
	if tn.Type != ggml.F32 {
		t.Fatalf("%s: %s is %v, want F32", f.Path, name, tn.Type)
	}
	out := make([]float32, tn.Elements())
	if err := Dequantize(ggml.F32, f.TensorData(tn), out); err != nil {
		t.Fatal(err)
	}
	return out
}
