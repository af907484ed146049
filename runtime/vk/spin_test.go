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
