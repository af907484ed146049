package vk

import (
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// TestSpinWaitKeepsLogits runs stories260K token by token (every step the
// same kind of submission, so the waiter learns its length and polls near
// its end, as on a GPU) and checks the logits against the CPU backend:
// polling changes when the host looks, never what it reads.
func TestSpinWaitKeepsLogits(t *testing.T) {
	d := testDevice(t)
	old, ends := d.SpinWait, d.SpinEnds
	d.SpinWait = true
	t.Cleanup(func() { d.SpinWait = old })
	prompt := make([]int32, 24)
	for i := range prompt {
		prompt[i] = int32(1 + (i*53)%500)
	}
	bound := storiesNMSE(d)
	if e := compareLogits(t, testenv.Model(t, "stories260K.gguf"), prompt, 8, backend.KVF16, false); e > bound {
		t.Errorf("logits NMSE %.3g over %.0e", e, bound)
	}
	t.Logf("%d steps' ends seen by polling", d.SpinEnds-ends)
}

// TestSpinEnv: VKCHAT_VK_SPIN turns the fence polling on or off on either
// layout and refuses anything else; the GPU layout polls, the CPU one not.
func TestSpinEnv(t *testing.T) {
	if !gpuTuning.spinFence || cpuTuning.spinFence {
		t.Errorf("spinFence: GPU layout %v, CPU layout %v; want on, off", gpuTuning.spinFence, cpuTuning.spinFence)
	}
	for _, c := range []struct {
		base tuning
		form string
		spin bool
		fail bool
	}{
		{gpuTuning, "", true, false},
		{cpuTuning, "", false, false},
		{cpuTuning, "on", true, false},
		{gpuTuning, "off", false, false},
		{gpuTuning, "yes", false, true},
	} {
		got, err := c.base.withSpin(c.form)
		if (err != nil) != c.fail {
			t.Errorf("%q: error %v, want failure %v", c.form, err, c.fail)
			continue
		}
		if !c.fail && got.spinFence != c.spin {
			t.Errorf("%q: spinFence %v, want %v", c.form, got.spinFence, c.spin)
		}
	}
}
