package vk

import (
	"context"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// TestDeviceResidentUnmapped runs the GPU layout on a device whose
// device-local memory is left unmapped, as on a discrete GPU without
// resizable BAR: the step parameters reach the kernels only through the
// copy at the start of the command buffer, the logits stay on the device
// and come back through staging only when asked for, and the head reads
// them where they are. lavapipe maps everything, so nothing else runs
// this path.
func TestDeviceResidentUnmapped(t *testing.T) {
	testDevice(t) // skips without Vulkan
	d, err := openGPU(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	d.Unmapped = true
	d.tune = gpuTuning
	m := loadModel(t, testenv.Model(t, "stories260K.gguf"))
	opts := backend.Options{ContextSize: 64, Device: -1}
	vb, err := newTestBackend(d, m, opts, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer vb.Close()
	if vb.graph.step.Mapped() != nil || vb.act.logits.Mapped() != nil || vb.graph.stepHost == nil {
		t.Fatalf("the step parameters and logits are not device-local and unmapped (step mapped %v, logits mapped %v, host copy %v)",
			vb.graph.step.Mapped() != nil, vb.act.logits.Mapped() != nil, vb.graph.stepHost != nil)
	}
	cb, err := cpuFor(t, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	ctx := context.Background()
	prompt := []int32{1, 403, 407, 261, 378, 285, 414, 270, 284, 453}
	ref, err := cb.Forward(ctx, prompt, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := vb.Forward(ctx, prompt, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(ref, got); e > storiesNMSE(d) {
		t.Errorf("prompt logits NMSE %.3g over %.0e", e, storiesNMSE(d))
	}
	// a decode step through the head, then the vocabulary on demand
	next := int32(argmax(got))
	ref, err = cb.Forward(ctx, []int32{next}, len(prompt), false)
	if err != nil {
		t.Fatal(err)
	}
	h, ok, err := vb.ForwardHead(ctx, []int32{next}, len(prompt), 8)
	if err != nil || !ok {
		t.Fatalf("head: ok %v, %v", ok, err)
	}
	if want := int32(argmax(ref)); h.IDs[0] != want {
		t.Errorf("head's best token %d, the reference's %d", h.IDs[0], want)
	}
	all, err := vb.LastLogits(h.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(ref, all); e > storiesNMSE(d) {
		t.Errorf("decode logits read back after the head: NMSE %.3g over %.0e", e, storiesNMSE(d))
	}
	if all[h.IDs[0]] != h.Logits[0] {
		t.Errorf("the head's best logit %g, the vocabulary's %g", h.Logits[0], all[h.IDs[0]])
	}
}
