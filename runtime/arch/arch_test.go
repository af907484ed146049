package arch

import (
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// TestLoadSynthArchs resolves every shared synth-<arch> file and checks
// what its declaration and keys say, as ../shared/README.md and
// docs/architectures.md describe the files: head sizes, the recipe, the
// per-layer windows and RoPE, multipliers and caps, tied outputs and the
// fused tensors split by rows.
func TestLoadSynthArchs(t *testing.T) {
	inv := func(x float32) float32 { return 1 / float32(math.Sqrt(float64(x))) }
	type want struct {
		headDim, layers int
		tied            bool
		block           Block
		windows         []int  // per layer
		nope            []bool // per layer: RoPE off
		ropeBase        []float32
		ropeScale       []float32
		embedScale      float32
		residual        float32
		attnScale       float32
		scaleQ          bool
		logitScale      float32
		attnCap         float32
		finalCap        float32
		neox            bool
	}
	silu := Block{PreNorm: true, Act: ActSiLU}
	cases := map[string]want{
		"qwen3": {headDim: 128, layers: 2, block: Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU},
			windows: []int{0, 0}, nope: []bool{false, false}, ropeBase: []float32{1e6, 1e6}, ropeScale: []float32{1, 1},
			embedScale: 1, residual: 1, attnScale: inv(128), logitScale: 1, neox: true},
		"gemma2": {headDim: 128, layers: 2, tied: true, block: Block{PreNorm: true, PostNorm: true, Act: ActGELUTanh},
			windows: []int{8, 0}, nope: []bool{false, false}, ropeBase: []float32{1e4, 1e4}, ropeScale: []float32{1, 1},
			embedScale: 16, residual: 1, attnScale: inv(128), scaleQ: true, logitScale: 1, attnCap: 4, finalCap: 8, neox: true},
		"gemma3": {headDim: 128, layers: 6, tied: true, block: Block{PreNorm: true, PostNorm: true, QKNorm: QKNormHead, Act: ActGELUTanh},
			windows: []int{8, 8, 8, 8, 8, 0}, nope: make([]bool, 6),
			ropeBase:   []float32{1e4, 1e4, 1e4, 1e4, 1e4, 1e6},
			ropeScale:  []float32{1, 1, 1, 1, 1, 0.125},
			embedScale: 16, residual: 1, attnScale: inv(128), scaleQ: true, logitScale: 1, neox: true},
		"phi3": {headDim: 64, layers: 2, block: silu, windows: []int{0, 0}, nope: []bool{false, false},
			ropeBase: []float32{1e4, 1e4}, ropeScale: []float32{1, 1},
			embedScale: 1, residual: 1, attnScale: inv(64), scaleQ: true, logitScale: 1, neox: true},
		"smollm3": {headDim: 64, layers: 4, tied: true, block: silu, windows: make([]int, 4), nope: []bool{false, false, false, true},
			ropeBase: []float32{2e6, 2e6, 2e6, 2e6}, ropeScale: []float32{1, 1, 1, 1},
			embedScale: 1, residual: 1, attnScale: inv(64), logitScale: 1},
		"olmo2": {headDim: 64, layers: 2, block: Block{PostNorm: true, QKNorm: QKNormFull, Act: ActSiLU},
			windows: []int{0, 0}, nope: []bool{false, false}, ropeBase: []float32{5e5, 5e5}, ropeScale: []float32{1, 1},
			embedScale: 1, residual: 1, attnScale: inv(64), logitScale: 1, neox: true},
		"granite": {headDim: 64, layers: 2, block: silu, windows: []int{0, 0}, nope: []bool{false, false},
			ropeBase: []float32{1e4, 1e4}, ropeScale: []float32{1, 1},
			embedScale: 12, residual: 0.22, attnScale: 0.0078125, logitScale: 0.125},
	}
	for arch, w := range cases {
		for _, typ := range []string{"F32", "Q8_0", "Q4_K_M"} {
			t.Run(arch+"-"+typ, func(t *testing.T) {
				f, err := gguf.Open(testenv.Model(t, "synth-"+arch+"-"+typ+".gguf"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				m, err := Load(f)
				if err != nil {
					t.Fatal(err)
				}
				checkModel(t, m)
				if m.HeadDim != w.headDim || len(m.Layers) != w.layers || m.Tied != w.tied || m.Block != w.block || m.Rope.NeoX != w.neox {
					t.Errorf("head dim %d, %d layers, tied %v, block %+v, neox %v; want %d, %d, %v, %+v, %v",
						m.HeadDim, len(m.Layers), m.Tied, m.Block, m.Rope.NeoX, w.headDim, w.layers, w.tied, w.block, w.neox)
				}
				var windows []int
				var nope []bool
				var base, scale []float32
				for _, l := range m.Layers {
					windows = append(windows, l.Config.Window)
					nope = append(nope, !l.Config.Rope)
					base = append(base, l.Config.RopeBase)
					scale = append(scale, l.Config.RopeScale)
					if (l.QNorm != nil) != (w.block.QKNorm != QKNormNone) || (l.PostAttnNorm != nil) != w.block.PostNorm {
						t.Errorf("optional weights do not follow the recipe: q norm %v, post norm %v", l.QNorm != nil, l.PostAttnNorm != nil)
					}
					if l.Wq.Rows != m.Heads*m.HeadDim || l.Wo.Cols != m.Heads*m.HeadDim || l.Gate.Rows != m.FF || l.Up.Rows != m.FF {
						t.Errorf("layer shapes: Wq rows %d, Wo cols %d, gate %d, up %d", l.Wq.Rows, l.Wo.Cols, l.Gate.Rows, l.Up.Rows)
					}
				}
				if !slices.Equal(windows, w.windows) || !slices.Equal(nope, w.nope) || !slices.Equal(base, w.ropeBase) || !slices.Equal(scale, w.ropeScale) {
					t.Errorf("layers: windows %v, NoPE %v, rope base %v, scale %v; want %v, %v, %v, %v", windows, nope, base, scale, w.windows, w.nope, w.ropeBase, w.ropeScale)
				}
				got := []float32{m.EmbedScale, m.ResidualScale, m.AttnScale, m.LogitScale, m.AttnSoftcap, m.FinalSoftcap}
				exp := []float32{w.embedScale, w.residual, w.attnScale, w.logitScale, w.attnCap, w.finalCap}
				if !slices.Equal(got, exp) || m.ScaleQ != w.scaleQ {
					t.Errorf("embed, residual, attention, logit scales and caps %v (scale Q %v), want %v (%v)", got, m.ScaleQ, exp, w.scaleQ)
				}
			})
		}
	}
}

// TestFusedSplitsAreRowSlices: phi3's attn_qkv and gate|up ffn_up are split
// into row slices of the mapped tensor, in the order Q, K, V and gate, up.
func TestFusedSplitsAreRowSlices(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "synth-phi3-Q8_0.gguf"))
	f := m.File
	qkv, _ := f.Tensor("blk.1.attn_qkv.weight")
	up, _ := f.Tensor("blk.1.ffn_up.weight")
	l := m.Layers[1]
	whole, gu := f.TensorData(qkv), f.TensorData(up)
	parts := [][]byte{l.Wq.Data, l.Wk.Data, l.Wv.Data}
	if got := slices.Concat(parts...); !slices.Equal(got, whole) || &l.Wq.Data[0] != &whole[0] {
		t.Errorf("Wq|Wk|Wv (%d+%d+%d bytes) are not attn_qkv's rows in order", len(l.Wq.Data), len(l.Wk.Data), len(l.Wv.Data))
	}
	if got := slices.Concat(l.Gate.Data, l.Up.Data); !slices.Equal(got, gu) || l.Gate.Rows != m.FF {
		t.Errorf("gate|up are not ffn_up's rows in order")
	}
}

// TestArchRefusals: what a declaration forbids or requires is refused by
// name, in one line wrapping gguf.ErrFormat.
func TestArchRefusals(t *testing.T) {
	// t is the subtest's: a missing file skips that case, not the parent.
	spec := func(t *testing.T, arch string) *ggufspec.Spec {
		dir, name := path.Split(arch)
		f, err := gguf.Open(testenv.Model(t, dir+"synth-"+name+"-F32.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return fromgguf.Spec(f)
	}
	cases := []struct {
		name, arch, field, msg string
		edit                   func(s *ggufspec.Spec)
	}{
		{"gemma2 with an output", "gemma2", `tensor "output.weight"`, "must not be present", func(s *ggufspec.Spec) {
			e := s.Tensor("token_embd.weight")
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "output.weight", Type: e.Type, Dims: e.Dims, Data: e.Data})
		}},
		{"olmo2 without an output", "olmo2", `tensor "output.weight"`, "missing", func(s *ggufspec.Spec) { s.DelTensor("output.weight") }},
		{"granite without logit_scale", "granite", `key "granite.logit_scale"`, "missing", func(s *ggufspec.Spec) { s.Del("granite.logit_scale") }},
		{"granite residual_scale NaN", "granite", `key "granite.residual_scale"`, "must be a positive number", func(s *ggufspec.Spec) {
			s.Set("granite.residual_scale", float32(math.NaN()))
		}},
		{"qwen3 without a k norm", "qwen3", `tensor "blk.1.attn_k_norm.weight"`, "missing", func(s *ggufspec.Spec) { s.DelTensor("blk.1.attn_k_norm.weight") }},
		{"qwen3 key_length odd", "qwen3", `key "qwen3.attention.key_length"`, "must be even", func(s *ggufspec.Spec) { s.Set("qwen3.attention.key_length", uint32(7)) }},
		{"gemma3 q norm over the full width", "gemma3", `tensor "blk.0.attn_q_norm.weight"`, "shape", func(s *ggufspec.Spec) {
			s.Tensor("blk.0.attn_q_norm.weight").Dims = []uint64{256}
			s.Tensor("blk.0.attn_q_norm.weight").Data = make([]byte, 4*256)
		}},
		{"gemma2 attention soft-cap negative", "gemma2", `key "gemma2.attn_logit_softcapping"`, "must be a positive number", func(s *ggufspec.Spec) {
			s.Set("gemma2.attn_logit_softcapping", float32(-1))
		}},
		{"phi3 fused ffn_up of one half", "phi3", `tensor "blk.0.ffn_up.weight"`, "shape", func(s *ggufspec.Spec) {
			s.Tensor("blk.0.ffn_up.weight").Dims = []uint64{256, 512}
			s.Tensor("blk.0.ffn_up.weight").Data = s.Tensor("blk.0.ffn_up.weight").Data[:4*256*512]
		}},
		{"qwen3 with an attn_output bias", "qwen3", `tensor "blk.1.attn_output.bias"`, "is not supported", func(s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "blk.1.attn_output.bias", Type: ggml.F32, Dims: []uint64{256}, Data: f32s(256, 0.5)})
		}},
		{"gemma3 rope.freq_base_swa 0", "gemma3", `key "gemma3.rope.freq_base_swa"`, "must be positive", func(s *ggufspec.Spec) {
			s.Set("gemma3.rope.freq_base_swa", float32(0))
		}},
		{"qwen3moe using more experts than it has", "2026/qwen3moe", `key "qwen3moe.expert_used_count"`, "between 1 and expert_count 8", func(s *ggufspec.Spec) {
			s.Set("qwen3moe.expert_used_count", uint32(9))
		}},
		{"qwen3moe without experts", "2026/qwen3moe", `key "qwen3moe.expert_count"`, "routes every layer's FFN to experts", func(s *ggufspec.Spec) {
			s.Del("qwen3moe.expert_count")
		}},
		{"qwen3moe expert bank of 7 experts", "2026/qwen3moe", `tensor "blk.1.ffn_up_exps.weight"`, "shape [256 64 7], expected [256 64 8]", func(s *ggufspec.Spec) {
			t := s.Tensor("blk.1.ffn_up_exps.weight")
			t.Dims[2] = 7
			t.Data = t.Data[:4*256*64*7]
		}},
		{"qwen3moe without a router", "2026/qwen3moe", `tensor "blk.0.ffn_gate_inp.weight"`, "missing", func(s *ggufspec.Spec) { s.DelTensor("blk.0.ffn_gate_inp.weight") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spec(t, c.arch).Clone()
			c.edit(s)
			_, err, _ := loadMeasured(t, encode(t, s))
			if err == nil {
				t.Fatalf("loaded; want an error naming %s", c.field)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) || !errors.Is(err, gguf.ErrFormat) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error %q\n  want one line wrapping ErrFormat with field %q and message %q", msg, c.field, c.msg)
			}
		})
	}
}

// TestArchVariantsLoad: keys that change the recipe without a file of
// their own (granite's rope.scaling.finetuned, an unset gemma3 window, a
// gemma2 pattern key) resolve as llama.cpp reads them.
func TestArchVariantsLoad(t *testing.T) {
	load := func(arch string, edit func(s *ggufspec.Spec)) *Model {
		t.Helper()
		dir, name := path.Split(arch)
		f, err := gguf.Open(testenv.Model(t, dir+"synth-"+name+"-F32.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := fromgguf.Spec(f).Clone()
		edit(s)
		m, err, _ := loadMeasured(t, encode(t, s))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := load("granite", func(s *ggufspec.Spec) { s.Set("granite.rope.scaling.finetuned", false) }); m.Layers[0].Config.Rope || m.Layers[1].Config.Rope {
		t.Errorf("granite with rope.scaling.finetuned=false still rotates")
	}
	m := load("gemma3", func(s *ggufspec.Spec) { s.Del("gemma3.attention.sliding_window") })
	for i, l := range m.Layers {
		if l.Config.Window != 0 || l.Config.RopeBase != 1e6 || l.Config.RopeScale != 0.125 {
			t.Errorf("gemma3 without a window: layer %d %+v, want global attention and RoPE", i, l.Config)
		}
	}
	m = load("gemma2", func(s *ggufspec.Spec) {
		s.Set("gemma2.attention.sliding_window_pattern", uint32(3))
		s.Set("gemma2.rope.freq_base_swa", float32(500))
	})
	if got := []int{m.Layers[0].Config.Window, m.Layers[1].Config.Window}; !slices.Equal(got, []int{8, 8}) || m.Layers[0].Config.RopeBase != 500 {
		t.Errorf("gemma2 with pattern 3: windows %v, local base %g; want [8 8], 500", got, m.Layers[0].Config.RopeBase)
	}
	m = load("phi3", func(s *ggufspec.Spec) {
		long := ggufspec.Tensor{Name: "rope_factors_long.weight", Type: ggml.F32, Dims: []uint64{32}, Data: f32s(32, 4)}
		short := ggufspec.Tensor{Name: "rope_factors_short.weight", Type: ggml.F32, Dims: []uint64{32}, Data: f32s(32, 2)}
		s.Tensors = append(s.Tensors, long, short)
		s.Set("phi3.rope.scaling.attn_factor", float32(1.25))
	})
	if m.Rope.Factors(512)[0] != 2 || m.Rope.Factors(513)[0] != 4 || m.Rope.AttnFactor != 1.25 {
		t.Errorf("phi3 LongRoPE: factors at 512 %v, at 513 %v, attn factor %g; want short (2) within the original 512, long (4) past it, 1.25",
			m.Rope.Factors(512)[0], m.Rope.Factors(513)[0], m.Rope.AttnFactor)
	}
}

// A qwen3moe file loads with its router and expert banks, an expert is a
// run of its bank's rows, and the active figures leave out the experts a
// token does not use (shared synth file: 2 layers, embd 256, 8 experts of
// ff 64, 2 used).
func TestMoELoad(t *testing.T) {
	m := loadFile(t, testenv.Shared(t, "models/2026/synth-qwen3moe-F32.gguf"))
	if m.MoE != (MoEConfig{Gating: GatingSoftmaxTopKNorm, Experts: 8, ExpertsUsed: 2, ExpertFF: 64}) {
		t.Fatalf("MoE %+v", m.MoE)
	}
	x := m.Layers[1].Experts
	if x == nil || x.Router.Rows != 8 || x.Gate.Rows != 8*64 || x.Down.Rows != 8*256 || x.Down.Cols != 64 {
		t.Fatalf("layer 1 experts %+v", x)
	}
	gate, _, down := x.Expert(5)
	if gate.Rows != 64 || &gate.Data[0] != &x.Gate.Data[5*64*256*4] || down.Rows != 256 || &down.Data[0] != &x.Down.Data[5*256*64*4] {
		t.Errorf("expert 5: gate %d rows at the wrong offset, or down %d rows", gate.Rows, down.Rows)
	}
	const bank, unused = 3 * 256 * 64 * 8, 6.0 / 8
	if got, want := m.Params()-m.ActiveParams(), int64(2*bank*unused); got != want {
		t.Errorf("inactive parameters %d, want %d", got, want)
	}
	if got, want := m.WeightBytes()-m.ActiveWeightBytes(), int64(2*bank*unused*4); got != want {
		t.Errorf("inactive bytes %d, want %d", got, want)
	}
	// each expert: 3 × 256 × 64 F32 = 196608 B; the rest is the file less 2 × 8 of those
	rest := m.WeightBytes() - 2*8*196608
	want := fmt.Sprintf("2 layers × 2 of 8 experts × 196608 B + %d B of attention, norms, router and embeddings = %d B", rest, 2*2*196608+rest)
	if got := m.ActiveFormula(); got != want {
		t.Errorf("formula %q\n want %q", got, want)
	}
}

// loadFile opens and loads a model file, closed when the test ends.
func loadFile(t *testing.T, path string) *Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
