package arch

import (
	"errors"
	"math"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// TestMistral3Config: the synth mistral3 file (head_dim 96 from
// key_length with embd 256 and 4 heads; YaRN ×16 over an original 8 with
// yarn_log_multiplier 1; temperature β 0.1) resolves as llama.cpp's
// context does: the YaRN magnitude cancels (cos/sin × 1/(1+0.1·ln 16)
// against ggml's × (1+0.1·ln 16)), the attention scale is 1/√96, and Q's
// temperature steps every 8 positions.
func TestMistral3Config(t *testing.T) {
	m := loadFile(t, testenv.Model(t, "2026b/synth-mistral3-F32.gguf"))
	if m.HeadDim != 96 || m.Heads*m.HeadDim == m.Embd || m.Rope.Dims != 96 {
		t.Fatalf("head dim %d, rope dims %d (embd %d, %d heads)", m.HeadDim, m.Rope.Dims, m.Embd, m.Heads)
	}
	y := m.Rope.YaRN
	if y == nil || m.Rope.Scale != 1.0/16 {
		t.Fatalf("YaRN %+v, scale %g", y, m.Rope.Scale)
	}
	if net := m.Rope.AttnFactor * y.MScale; math.Abs(float64(net)-1) > 1e-6 {
		t.Errorf("cos/sin × %g × %g = %g, want 1 (yarn_log_multiplier 1)", m.Rope.AttnFactor, y.MScale, net)
	}
	if want := 1 / math.Sqrt(96); math.Abs(float64(m.AttnScale)-want) > 1e-7 {
		t.Errorf("attention scale %g, want %g", m.AttnScale, want)
	}
	if m.QTemperature != (Temperature{Beta: 0.1, Length: 8}) {
		t.Fatalf("temperature %+v, want β 0.1 every 8 positions", m.QTemperature)
	}
	for _, c := range []struct {
		pos  int
		want float64
	}{{0, 1}, {7, 1}, {8, 1 + 0.1*math.Log(2)}, {15, 1 + 0.1*math.Log(2)}, {16, 1 + 0.1*math.Log(3)}, {100, 1 + 0.1*math.Log(13)}} {
		if got := m.QTemperature.At(c.pos); math.Abs(float64(got)-c.want) > 1e-7 {
			t.Errorf("temperature at %d = %g, want %g", c.pos, got, c.want)
		}
	}
}

// TestMistral3YaRNKeys: the betas the file sets move the ramp, a
// yarn_log_multiplier other than 1 leaves the magnitude (1+0.1·ln f) /
// (1+0.1·m·ln f) (llama-context.cpp), and bad values are refused by key.
func TestMistral3YaRNKeys(t *testing.T) {
	f, err := gguf.Open(testenv.Model(t, "2026b/synth-mistral3-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	base := fromgguf.Spec(f)
	load := func(t *testing.T, edit func(*ggufspec.Spec)) (*Model, error) {
		s := base.Clone()
		edit(s)
		m, err, _ := loadMeasured(t, encode(t, s))
		return m, err
	}
	m, err := load(t, func(s *ggufspec.Spec) { s.Set("mistral3.rope.scaling.yarn_beta_slow", float32(1.0/8)) })
	if err != nil {
		t.Fatal(err)
	}
	// β_slow 1/8: 96·ln(8/(2π/8))/(2·ln 1e6) = 8.06, ceiled to 9 (1 with β_slow 1)
	if m.Rope.YaRN.High != 9 {
		t.Errorf("ramp high %g with β_slow 1/8, want 9", m.Rope.YaRN.High)
	}
	if m, err = load(t, func(s *ggufspec.Spec) { s.Set("mistral3.rope.scaling.yarn_log_multiplier", float32(0.5)) }); err != nil {
		t.Fatal(err)
	}
	want := (1 + 0.1*math.Log(16)) / (1 + 0.05*math.Log(16))
	if net := float64(m.Rope.AttnFactor * m.Rope.YaRN.MScale); math.Abs(net-want) > 1e-6 {
		t.Errorf("log multiplier 0.5: cos/sin × %g, want %g", net, want)
	}
	if m, err = load(t, func(s *ggufspec.Spec) { s.Del("mistral3.attention.temperature_scale") }); err != nil || m.QTemperature != (Temperature{}) {
		t.Errorf("without temperature_scale: %+v, %v; want no temperature", m.QTemperature, err)
	}
	for _, c := range []struct {
		key string
		v   any
		msg string
	}{
		{"mistral3.rope.scaling.yarn_beta_fast", float32(0), "must be a positive number"},
		{"mistral3.rope.scaling.yarn_beta_slow", float32(math.NaN()), "must be a positive number"},
		{"mistral3.rope.scaling.yarn_log_multiplier", float32(-1), "must be a small non-negative number"},
		{"mistral3.attention.temperature_scale", float32(math.Inf(1)), "must be a small positive number"},
		{"mistral3.attention.temperature_scale", "hot", "mistral3.attention.temperature_scale"},
	} {
		_, err := load(t, func(s *ggufspec.Spec) { s.Set(c.key, c.v) })
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.msg) || !errors.Is(err, gguf.ErrFormat) {
			t.Errorf("%s = %v: %v; want a format error naming the key and %q", c.key, c.v, err, c.msg)
		}
	}
}
