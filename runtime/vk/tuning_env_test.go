package vk

import (
	"strings"
	"testing"
)

// TestTuningEnv: each variable forces its choice on either layout (the
// GPU attention form with its lanes and splits where it was off), several
// combine, unset ones leave the layout as it is, and a form that is not
// one of a variable's is refused with the variable and its forms named.
func TestTuningEnv(t *testing.T) {
	if !gpuTuning.spinFence || cpuTuning.spinFence || gpuTuning.intDot || cpuTuning.intDot {
		t.Errorf("shipped layouts: GPU spin %v intDot %v, CPU spin %v intDot %v; want on, off, off, off",
			gpuTuning.spinFence, gpuTuning.intDot, cpuTuning.spinFence, cpuTuning.intDot)
	}
	if gpuTuning.matmul || gpuTuning.mmDot != dotIntAccelerated || !cpuTuning.matmul || cpuTuning.mmDot != dotFloat {
		t.Errorf("shipped layouts: GPU matmul %v dot %d, CPU matmul %v dot %d; want off, accelerated, on, float",
			gpuTuning.matmul, gpuTuning.mmDot, cpuTuning.matmul, cpuTuning.mmDot)
	}
	type want struct {
		ordered, intDot, spin bool
		matmul                bool
		mmDot                 dotForm
		tokenLanes            bool
	}
	for _, c := range []struct {
		base tuning
		env  map[string]string
		want want
		fail string // a part of the error
	}{
		{cpuTuning, nil, want{true, false, false, true, dotFloat, true}, ""},
		{gpuTuning, nil, want{false, false, true, false, dotIntAccelerated, false}, ""},
		{cpuTuning, map[string]string{AttentionEnv: "gpu"}, want{false, false, false, true, dotFloat, false}, ""},
		{gpuTuning, map[string]string{AttentionEnv: "ordered"}, want{true, false, true, false, dotIntAccelerated, true}, ""},
		{cpuTuning, map[string]string{AttentionEnv: "ordered-dims"}, want{true, false, false, true, dotFloat, false}, ""},
		{gpuTuning, map[string]string{MatvecEnv: "intdot"}, want{false, true, true, false, dotIntAccelerated, false}, ""},
		{gpuIntDot, map[string]string{MatvecEnv: "float"}, want{false, false, true, false, dotIntAccelerated, false}, ""},
		{cpuTuning, map[string]string{MatvecEnv: "intdot", SpinEnv: "on"}, want{true, true, true, true, dotFloat, true}, ""},
		{gpuTuning, map[string]string{SpinEnv: "off", AttentionEnv: "ordered"}, want{true, false, false, false, dotIntAccelerated, true}, ""},
		{gpuTuning, map[string]string{MatmulEnv: "float"}, want{false, false, true, true, dotFloat, false}, ""},
		{gpuTuning, map[string]string{MatmulEnv: "intdot"}, want{false, false, true, true, dotInt, false}, ""},
		{cpuTuning, map[string]string{MatmulEnv: "off"}, want{true, false, false, false, dotFloat, true}, ""},
		{cpuTuning, map[string]string{MatmulEnv: "intdot", MatvecEnv: "intdot"}, want{true, true, false, true, dotInt, true}, ""},
		{cpuTuning, map[string]string{LayoutEnv: "gpu"}, want{false, false, true, false, dotIntAccelerated, false}, ""},
		{gpuTuning, map[string]string{LayoutEnv: "cpu"}, want{true, false, false, true, dotFloat, true}, ""},
		{cpuTuning, map[string]string{LayoutEnv: "gpu", MatmulEnv: "float"}, want{false, false, true, true, dotFloat, false}, ""},
		{gpuTuning, map[string]string{LayoutEnv: "lavapipe"}, want{}, `VKCHAT_VK_LAYOUT="lavapipe": want gpu or cpu`},
		{gpuTuning, map[string]string{MatmulEnv: "tiled"}, want{}, `VKCHAT_VK_MATMUL="tiled": want off or float or intdot`},
		{gpuTuning, map[string]string{AttentionEnv: "fast"}, want{}, `VKCHAT_VK_ATTENTION="fast": want ordered or ordered-dims or gpu`},
		{gpuTuning, map[string]string{MatvecEnv: "int8"}, want{}, `VKCHAT_VK_MATVEC="int8": want float or intdot`},
		{gpuTuning, map[string]string{SpinEnv: "yes"}, want{}, `VKCHAT_VK_SPIN="yes": want on or off`},
	} {
		got, err := c.base.withEnv(func(k string) string { return c.env[k] })
		if c.fail != "" {
			if err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Errorf("%v: error %v, want %q", c.env, err, c.fail)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.env, err)
			continue
		}
		if g := (want{got.orderedAttention, got.intDot, got.spinFence, got.matmul, got.mmDot, got.attnTokenLanes}); g != c.want {
			t.Errorf("%v: ordered, intDot, spin, matmul, mmDot = %+v, want %+v", c.env, g, c.want)
		}
		if !got.orderedAttention && (got.attnLanes == 0 || got.attnSplits(8, 4096, 128) == 0) {
			t.Errorf("%v: the GPU form without lanes (%d) or splits", c.env, got.attnLanes)
		}
	}
}

// TestRoundingEnv: RoundingEnv forces a quantized model's rounding on
// either layout (tuning.cpuRounding), and refuses a form it does not
// have, naming the variable.
func TestRoundingEnv(t *testing.T) {
	if !cpuTuning.cpuRounding || gpuTuning.cpuRounding {
		t.Errorf("shipped layouts: CPU device rounds as the CPU backend %v, GPU %v; want on, off", cpuTuning.cpuRounding, gpuTuning.cpuRounding)
	}
	for _, c := range []struct {
		base tuning
		form string
		want bool
		fail string
	}{
		{cpuTuning, "", cpuTuning.cpuRounding, ""},
		{gpuTuning, "", false, ""},
		{gpuTuning, "cpu", true, ""},
		{cpuTuning, "device", false, ""},
		{cpuTuning, "cpu", true, ""},
		{gpuTuning, "exact", false, `VKCHAT_VK_ROUNDING="exact": want cpu or device`},
	} {
		got, err := c.base.withEnv(func(k string) string {
			if k == RoundingEnv {
				return c.form
			}
			return ""
		})
		if c.fail != "" {
			if err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Errorf("%q: error %v, want %q", c.form, err, c.fail)
			}
			continue
		}
		if err != nil || got.cpuRounding != c.want {
			t.Errorf("%q: cpuRounding %v (%v), want %v", c.form, got.cpuRounding, err, c.want)
		}
	}
}
