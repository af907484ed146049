package arch

import (
	"math"
	"testing"

	"vkchat/internal/testenv"
)

// The shared gpt-oss file's YaRN (factor 4 over an original context of
// 128, 64 rotated dims, base 150000), worked by hand: β_fast 32 gives
// 64·ln(128/(32·2π))/(2·ln 150000) = -1.21, floored and clamped to 0;
// β_slow 1 gives 64·ln(128/2π)/(2·ln 150000) = 8.09, ceiled to 9; the
// magnitude is 1 + 0.1·ln 4 = 1.138629.
func TestYaRNFromFile(t *testing.T) {
	m := loadFile(t, testenv.Shared(t, "models/2026/synth-gpt-oss-F32.gguf"))
	y := m.Rope.YaRN
	if y == nil || y.Low != 0 || y.High != 9 || math.Abs(float64(y.MScale)-1.138629) > 1e-6 || m.Rope.Scale != 0.25 {
		t.Fatalf("YaRN %+v, scale %g", y, m.Rope.Scale)
	}
	for _, c := range []struct {
		pair int
		want float32
	}{{0, 1}, {3, 1 - 3.0/9}, {9, 0}, {20, 0}} {
		if got := y.Ramp(c.pair); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("ramp at pair %d = %g, want %g", c.pair, got, c.want)
		}
	}
	// even layers slide (window 8), odd ones attend to everything
	for i, l := range m.Layers {
		if want := map[bool]int{true: 8, false: 0}[i%2 == 0]; l.Config.Window != want {
			t.Errorf("layer %d window %d, want %d", i, l.Config.Window, want)
		}
		if l.Sinks == nil || l.Bo == nil || l.Experts.GateBias == nil || l.Experts.DownBias.Rows != 8 || l.Experts.RouterBias == nil {
			t.Errorf("layer %d lacks sinks, the output bias or expert biases", i)
		}
	}
}
