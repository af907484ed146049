package synth

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/plan"
)

// TestEveryArchRoundTrips: a synthetic model of every supported
// architecture loads back through arch.Load with the recipe its
// declaration promises, and runs: the CPU backend gives finite logits. An
// architecture synth has no recipe for would be checked on the file made
// for it with llama.cpp's gguf-py in the shared models (models/2026)
// instead, so none is left out.
func TestEveryArchRoundTrips(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	shape := Shapes["tiny"]
	shape.Layers = 6 // a full gemma3 window pattern and smollm3's NoPE layer
	// sliding-window layers of each 6-layer model (synth's gemma4 pattern
	// is [1,1,0,1,1,0], the shared file's [1,1,1,0,1,0])
	wantWindows := map[string]int{"gemma2": 3, "gemma3": 5, "gpt-oss": 3, "gemma4": 4}
	for _, name := range arch.Supported() {
		if _, ok := archExtras[name]; !ok {
			t.Run(name+"-shared-F32", func(t *testing.T) {
				f, err := gguf.Open(testenv.Model(t, "2026/synth-"+name+"-F32.gguf"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				m, err := arch.Load(f)
				if err != nil {
					t.Fatal(err)
				}
				if m.Arch != name || len(m.Layers) != 6 {
					t.Errorf("loaded %s with %d layers, want %s with 6", m.Arch, len(m.Layers), name)
				}
				checkRuns(t, m, wantWindows[name])
			})
			continue
		}
		for _, typ := range []ggml.Type{ggml.F32, ggml.Q8_0} {
			t.Run(name+"-"+typ.String(), func(t *testing.T) {
				s := shape
				if name == "qwen3" || name == "gemma3" || name == "mistral3" {
					s.HeadDim = 32 // heads × head dim ≠ embd, as in the real models
				}
				path := filepath.Join(t.TempDir(), "m.gguf")
				if err := Write(path, s, Options{Arch: name, Type: typ, Vocab: vocab, Seed: 7, Window: 8}); err != nil {
					t.Fatal(err)
				}
				f, err := gguf.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				m, err := arch.Load(f)
				if err != nil {
					t.Fatal(err)
				}
				a, _ := arch.Lookup(name)
				hd := max(s.HeadDim, s.Embd/s.Heads)
				if a.MLA { // the decompressed head: nope + rope
					d := deepseek2Dims(s)
					hd = d.nope + d.rope
				}
				if m.Arch != name || m.Block != a.Block || len(m.Layers) != s.Layers || m.HeadDim != hd {
					t.Errorf("loaded %s, block %+v, %d layers, head dim %d", m.Arch, m.Block, len(m.Layers), m.HeadDim)
				}
				checkRuns(t, m, wantWindows[name])
			})
		}
	}
}

// checkRuns checks a loaded model's sliding-window layers and that the CPU
// backend gives it finite logits.
func checkRuns(t *testing.T, m *arch.Model, wantWindows int) {
	t.Helper()
	windows := 0
	for _, l := range m.Layers {
		if l.Config.Window > 0 {
			windows++
		}
	}
	if windows != wantWindows {
		t.Errorf("%d sliding-window layers, want %d", windows, wantWindows)
	}
	p, err := plan.Resolve(m, 32)
	if err != nil {
		t.Fatal(err)
	}
	be, err := cpu.New(p, backend.Options{ContextSize: 32, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	logits, err := be.Forward(context.Background(), []int32{1, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d is %g", i, v)
		}
	}
}

// TestChatTemplateCarriedOver: a model on the Qwen3 vocabulary keeps its
// chat template, so a chat can be tried end to end.
func TestChatTemplateCarriedOver(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	want, ok, err := vocab.String("tokenizer.chat_template")
	if err != nil || !ok {
		t.Fatalf("the Qwen3 vocabulary has no chat template (%v)", err)
	}
	w, err := Build(Shapes["tiny"], Options{Arch: "qwen3", Type: ggml.F32, Vocab: vocab, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "q.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _, _ := f.String("tokenizer.chat_template"); got != want {
		t.Errorf("chat template not carried over (%d bytes, want %d)", len(got), len(want))
	}
	if _, err := arch.Load(f); err != nil {
		t.Fatal(err)
	}
}

// TestBuildRefuses: shapes an architecture cannot have are refused, naming
// the problem.
func TestBuildRefuses(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	s := Shapes["tiny"]
	s.HeadDim = 32
	patterned := func(p string) Shape { s := Shapes["tiny"]; s.Layers, s.Pattern = 4, p; return s }
	for _, c := range []struct {
		name string
		s    Shape
		o    Options
		want string // in the error
	}{
		{"unknown architecture", Shapes["tiny"], Options{Arch: "gpt2", Type: ggml.F32, Vocab: vocab}, "gpt2"},
		{"llama with head dim apart", s, Options{Arch: "llama", Type: ggml.F32, Vocab: vocab}, "heads × head dim"},
		{"no vocabulary", Shapes["tiny"], Options{Arch: "qwen3", Type: ggml.F32}, "vocabulary"},
		{"embd not a block multiple", Shapes["tiny"], Options{Arch: "gemma3", Type: ggml.Q4_K, Vocab: vocab}, "block size"},
		{"another architecture's shape", Shapes["deepseek2"], Options{Arch: "qwen3moe", Type: ggml.F32, Vocab: vocab}, "laid out for deepseek2, not qwen3moe"},
		{"a pattern on a transformer", patterned("MEM*"), Options{Arch: "qwen3moe", Type: ggml.F32, Vocab: vocab}, "qwen3moe has none"},
		{"a pattern of too few letters", patterned("ME*"), Options{Arch: "nemotron_h_moe", Type: ggml.F32, Vocab: vocab}, "3 letters for 4 layers"},
		{"an unknown letter", patterned("MEx*"), Options{Arch: "nemotron_h_moe", Type: ggml.F32, Vocab: vocab}, `letter 2 ('x')`},
		{"an FFN layer where every layer has one", patterned("MEM*"), Options{Arch: "granitehybrid", Type: ggml.F32, Vocab: vocab}, `letter 1 ('E')`},
	} {
		if _, err := Build(c.s, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", c.name, err, c.want)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// TestShapePresets: every preset lays out (heads divide the width, KV
// heads the heads, head size a multiple of 8 as the Vulkan attention
// needs, widths whole quantization blocks), and the named geometries are
// the models they stand for, by their parameter counts at their own
// vocabularies: TinyLlama 1.1B (32,000) and Llama 3 8B (128,256, untied).
func TestShapePresets(t *testing.T) {
	for name, s := range Shapes {
		if s.Embd%s.Heads != 0 || s.Heads%s.KVHeads != 0 || (s.Embd/s.Heads)%8 != 0 || s.Embd%32 != 0 || s.FF%32 != 0 {
			t.Errorf("%s: %+v does not lay out", name, s)
		}
	}
	params := func(s Shape, vocab int) float64 {
		hd := s.Embd / s.Heads
		perLayer := s.Embd*(s.Embd+2*s.KVHeads*hd) + s.Embd*s.Embd + 3*s.Embd*s.FF + 2*s.Embd
		return float64(2*vocab*s.Embd + s.Layers*perLayer + s.Embd)
	}
	for _, c := range []struct {
		shape string
		vocab int
		want  float64 // published parameter count
	}{
		{"1b", 32000, 1.100e9},
		{"8b", 128256, 8.030e9},
	} {
		if got := params(Shapes[c.shape], c.vocab); math.Abs(got-c.want)/c.want > 0.005 {
			t.Errorf("%s: %.4g parameters at vocabulary %d, want %.4g", c.shape, got, c.vocab, c.want)
		}
	}
}
