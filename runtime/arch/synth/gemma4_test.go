package synth

import (
	"path/filepath"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// TestGemma4Recipe: a synthetic gemma4 loads back with the geometry the
// recipe lays out — which layers slide and their head sizes, the shared
// layers and the cache each reads, the per-layer embeddings, the output
// scale and the full layers' proportional RoPE — for 6 and 9 layers.
func TestGemma4Recipe(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	for _, c := range []struct {
		layers int
		reads  map[int]int // shared layer → the layer whose cache it reads
	}{
		{6, map[int]int{4: 3, 5: 2}},
		{9, map[int]int{6: 4, 7: 4, 8: 5}},
	} {
		s := Shapes["tiny"]
		s.Layers = c.layers
		path := filepath.Join(t.TempDir(), "g.gguf")
		if err := Write(path, s, Options{Arch: "gemma4", Type: ggml.Q8_0, Vocab: vocab, Seed: 3, Window: 8}); err != nil {
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
		for l, L := range m.Layers {
			lc := L.Config
			sliding := (l+1)%3 != 0
			wantHD, wantWindow := 16, 0
			if sliding {
				wantHD, wantWindow = 8, 8
			}
			if lc.HeadDim != wantHD || lc.RopeDims != wantHD || lc.Window != wantWindow || lc.NoRopeFactors != sliding {
				t.Errorf("%d layers, layer %d: head dim %d, RoPE dims %d, window %d, no factors %v; want %d, %d, %d, %v",
					c.layers, l, lc.HeadDim, lc.RopeDims, lc.Window, lc.NoRopeFactors, wantHD, wantHD, wantWindow, sliding)
			}
			want, shared := c.reads[l]
			if !shared {
				want = l
			}
			if lc.KVLayer != want {
				t.Errorf("%d layers, layer %d reads the cache of layer %d, want %d", c.layers, l, lc.KVLayer, want)
			}
			if L.PLE == nil || L.OutScale == nil {
				t.Errorf("%d layers, layer %d: per-layer embedding weights %v, output scale %v", c.layers, l, L.PLE != nil, L.OutScale != nil)
			}
		}
		if m.PLE == nil || m.PLE.Width != gemma4PLE {
			t.Errorf("%d layers: per-layer embeddings %+v, want width %d", c.layers, m.PLE, gemma4PLE)
		}
		// 8 pairs of the full head size 16: the first 2 rotate
		if ff := m.Rope.FreqFactors; len(ff) != 8 || ff[1] != 1 || ff[2] != 1e30 {
			t.Errorf("%d layers: rope_freqs %v, want 8 pairs, 2 rotating", c.layers, ff)
		}
		if m.FinalSoftcap != 30 {
			t.Errorf("%d layers: final soft-cap %g, want 30", c.layers, m.FinalSoftcap)
		}
	}
}
